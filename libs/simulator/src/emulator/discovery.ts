/**
 * The emulator's discovery file: `pid_<pid>.ini` in the running-AVD folder, `key=value` lines, so
 * tools that find running emulators by scanning that folder (Android Studio, emulator scripts) find ours.
 *
 * Folder, as the emulator computes it on Linux: `$XDG_RUNTIME_DIR/avd/running`; without
 * XDG_RUNTIME_DIR the first existing of `/run/user/<uid>` and `$HOME/.android`, else the temp dir,
 * then `avd/running` (created 0700). The file is written 0600 with the sticky bit, as the emulator does.
 *
 * One process, many devices (`farm sim`): a real emulator process is one device, and the file name
 * carries only the pid. The first device of the process writes `pid_<pid>.ini`; every other one
 * writes `pid_<pid>_<console port>.ini`, which a `pid_*.ini` scan still finds and whose leading pid
 * still tells a live process from a dead one.
 */
import fs from "node:fs";
import path from "node:path";
import { discoveryDirectory, discoveryFilePid, processAlive } from "@farm/emulator-grpc";

export { discoveryDirectory, parseDiscovery } from "@farm/emulator-grpc";

export interface DiscoveryInfo {
  consolePort: number;
  adbPort: number;
  avdName: string;
  avdDir: string;
  grpcPort?: number;
  /** Present when gRPC requires `authorization: Bearer <token>` (the emulator's -grpc-use-token). */
  grpcToken?: string;
  cmdline?: string;
}

import { SIM_EMULATOR_VERSION } from "../grpc/emulator-grpc-server.ts";

/** The emulator version and build we advertise (discovery file, `-version`, gRPC getStatus agree). */
export const EMULATOR_VERSION = SIM_EMULATOR_VERSION.split(" ")[0]!;
export const EMULATOR_BUILD = /build_id (\S+)\)/.exec(SIM_EMULATOR_VERSION)?.[1] ?? "0";

/** The console port of the device in this process that holds the plain `pid_<pid>.ini` name. */
let plainNameHolder: number | undefined;

export class DiscoveryFile {
  private removed = false;

  private constructor(readonly path: string, private readonly holdsPlainName: boolean) {}

  /** Writes the file (after removing files left by emulators that are no longer running). */
  static write(info: DiscoveryInfo, env: NodeJS.ProcessEnv = process.env): DiscoveryFile {
    const dir = discoveryDirectory(env);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    collectStale(dir);
    const plain = plainNameHolder === undefined;
    if (plain) plainNameHolder = info.consolePort;
    const name = plain ? `pid_${process.pid}.ini` : `pid_${process.pid}_${info.consolePort}.ini`;
    const file = path.join(dir, name);
    try {
      fs.writeFileSync(file, renderDiscovery(info), { mode: 0o600 });
      fs.chmodSync(file, 0o1600);
    } catch (e) {
      if (plain) plainNameHolder = undefined;
      throw e;
    }
    return new DiscoveryFile(file, plain);
  }

  remove(): void {
    if (this.removed) return;
    this.removed = true;
    if (this.holdsPlainName) plainNameHolder = undefined;
    try {
      fs.rmSync(this.path, { force: true });
    } catch {
      // a folder made read-only meanwhile: the next emulator collects the stale file by its dead pid
    }
  }
}

/**
 * The lines in the emulator's order: serial port, build, version, adb port, AVD, command line, gRPC.
 * `port.serial` is the number in the adb serial (adb port − 1), which readers match devices by; it is
 * the console port unless `-ports C,A` split them, and then `port.console` (ours) carries C.
 */
export function renderDiscovery(info: DiscoveryInfo): string {
  const serialPort = info.adbPort - 1;
  const entries: [string, string | number][] = [
    ["port.serial", serialPort],
    ...(info.consolePort !== serialPort ? [["port.console", info.consolePort] as [string, number]] : []),
    ["emulator.build", EMULATOR_BUILD],
    ["emulator.version", EMULATOR_VERSION],
    ["port.adb", info.adbPort],
    ["avd.name", info.avdName],
    ["avd.id", info.avdName],
    ["avd.dir", info.avdDir],
    ["cmdline", info.cmdline ?? ""],
  ];
  if (info.grpcPort !== undefined) entries.push(["grpc.port", info.grpcPort]);
  if (info.grpcToken !== undefined) entries.push(["grpc.token", info.grpcToken]);
  // A value never spans lines: a newline in an AVD path or argument would forge a key.
  return entries.map(([k, v]) => `${k}=${String(v).replace(/[\r\n]/g, " ")}\n`).join("");
}

/** Deletes `pid_N[_PORT].ini` files whose process N is gone, as the emulator does with its own. */
function collectStale(dir: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = discoveryFilePid(name);
    if (pid === undefined || processAlive(pid)) continue;
    fs.rmSync(path.join(dir, name), { force: true });
  }
}

