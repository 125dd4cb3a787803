/**
 * The `emulator` command's work (its main, bound to the process: src/cli/emulator.ts): boots an AVD into one simulated emulator (console N, adb N+1 or the two
 * ports of `-ports C,A`, discovery file), registers it with the adb server on $ANDROID_ADB_SERVER_PORT (default 5037), prints the
 * lines a launcher waits for, and runs until console `kill`, `io.stopSignal` or a shutdown request.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { EMULATOR_USAGE, parseEmulatorArgs, type EmulatorArgs } from "./args.ts";
import { AvdError, avdHome, listAvds, readAvd, type Avd } from "./avd.ts";
import { BOOT_DELAY_MS, readEmulatorEnv, type EmulatorEnvConfig } from "./boot-profile.ts";
import { EMULATOR_BUILD, EMULATOR_VERSION } from "../discovery.ts";
import { SNAPSHOT_LOAD_MS } from "../../android/system/latency.ts";
import { SNAPSHOT_STATE_FILE } from "../../snapshot/device-snapshots.ts";
import { SimEmulator } from "../sim-emulator.ts";
import { portFree } from "@farm/net-ports";
import { sleep } from "@farm/time";
import { coerceError } from "@farm/errors";

export interface EmulatorIO {
  out(line: string): void;
  err(line: string): void;
  /** Abrupt death (console `crash`, crash fault): the main kills its process. */
  crash(): void;
  /** Resolves (with the signal's name) when the process is asked to stop, e.g. on SIGTERM/SIGINT. */
  stopSignal: Promise<string>;
}

const log = (level: "INFO" | "WARNING" | "ERROR" | "FATAL", msg: string) => `${level.padEnd(8)}| ${msg}`;
const DEFAULT_ADB_SERVER_PORT = 5037;
/** The range the emulator takes its default console port from. */
const FIRST_CONSOLE_PORT = 5554;
const LAST_CONSOLE_PORT = 5584;

/** Runs the command; resolves with the exit code once the emulator has shut down. */
export async function runEmulator(argv: string[], env: NodeJS.ProcessEnv, io: EmulatorIO): Promise<number> {
  let args: EmulatorArgs;
  let cfg: EmulatorEnvConfig;
  try {
    args = parseEmulatorArgs(argv);
    cfg = readEmulatorEnv(env);
  } catch (e) {
    io.err(log("ERROR", e instanceof Error ? e.message : String(e)));
    return 1;
  }
  if (args.help) {
    io.out(EMULATOR_USAGE);
    return 0;
  }
  if (args.version) {
    io.out(`Android emulator version ${EMULATOR_VERSION} (build_id ${EMULATOR_BUILD}) (CL:N/A) — simulated by the Android episode farm`);
    return 0;
  }
  const home = avdHome(env);
  if (args.listAvds) {
    for (const name of listAvds(home)) io.out(name);
    return 0;
  }
  if (!args.avd) {
    io.err(log("ERROR", "No AVD specified. Use '@foo' or '-avd foo' to launch a virtual device named 'foo' (see -list-avds)"));
    return 1;
  }
  let avd: Avd;
  let adbServerPort: number;
  try {
    avd = readAvd(home, args.avd);
    adbServerPort = adbServerPortOf(env);
  } catch (e) {
    io.err(log(e instanceof AvdError ? "FATAL" : "ERROR", coerceError(e).message));
    return 1;
  }
  return boot(args, cfg, avd, adbServerPort, argv, io);
}

function adbServerPortOf(env: NodeJS.ProcessEnv): number {
  const raw = env.ANDROID_ADB_SERVER_PORT;
  if (raw === undefined || raw === "") return DEFAULT_ADB_SERVER_PORT;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 65535) throw new Error(`ANDROID_ADB_SERVER_PORT must be a port number, got '${raw}'`);
  return n;
}

async function boot(args: EmulatorArgs, cfg: EmulatorEnvConfig, avd: Avd, adbServerPort: number, argv: string[], io: EmulatorIO): Promise<number> {
  const started = Date.now();
  // Heed a stop from the start: a launcher may stop an emulator that is still booting.
  const stopSignal = io.stopSignal;
  let stopRequested: string | undefined;
  void stopSignal.then((sig) => (stopRequested = sig));
  io.out(log("INFO", `Android emulator version ${EMULATOR_VERSION} (build_id ${EMULATOR_BUILD}) (CL:N/A)`));
  if (args.verbose && args.ignored.length) io.out(log("INFO", `Ignored by the simulated emulator: ${args.ignored.join(" ")}`));
  const consolePort = args.consolePort ?? (await firstFreeConsolePort());
  if (consolePort === undefined) {
    io.err(log("FATAL", `no free console/adb port pair in ${FIRST_CONSOLE_PORT}..${LAST_CONSOLE_PORT + 1}; pass -ports <console>,<adb>`));
    return 1;
  }

  // Quick boot: from the named snapshot (default_boot unless -snapshot), when it exists and loading is allowed.
  const snapshotName = args.snapshot ?? "default_boot";
  const snapshotDir = path.join(avd.dir, "snapshots");
  const canLoad = !args.noSnapshot && !args.noSnapshotLoad;
  const fromSnapshot = canLoad && fs.existsSync(path.join(snapshotDir, snapshotName, SNAPSHOT_STATE_FILE));
  const saveOnExit = !args.noSnapshot && !args.noSnapshotSave && !args.readOnly;
  if (!fromSnapshot) io.out(log("INFO", `Cold boot: ${canLoad ? "snapshot doesn't exist" : "requested by the user"}`));
  // A snapshot boot's delay includes the load itself, which the device's snapshot API waits.
  const delay = fromSnapshot ? Math.max(0, BOOT_DELAY_MS[cfg.profile].snapshot - SNAPSHOT_LOAD_MS[cfg.profile]) : BOOT_DELAY_MS[cfg.profile].cold;
  await Promise.race([sleep(delay), stopSignal]);
  if (stopRequested) {
    io.out(log("INFO", `Shutting down (received ${stopRequested} while booting)`));
    return 0;
  }

  const crash = (): void => io.crash();
  const grpcToken = args.grpcUseToken ? crypto.randomBytes(24).toString("base64url") : undefined;
  let emu: SimEmulator;
  try {
    emu = await SimEmulator.start({
      adbPort: adbServerPort,
      consolePort,
      ...(args.adbPort !== undefined ? { devicePort: args.adbPort } : {}),
      awaitOnline: false,
      avdName: avd.name,
      avdDir: avd.dir,
      snapshotDir,
      screen: avd.screen,
      readOnly: args.readOnly,
      latencyProfile: cfg.profile,
      // The emulator serves gRPC on 8554 for console 5554 when -grpc is not given: the same offset here.
      grpc: { port: args.grpcPort ?? (await defaultGrpcPort(consolePort)), ...(grpcToken ? { token: grpcToken } : {}) },
      cmdline: ["emulator", ...argv].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(" "),
      ...(cfg.seed !== undefined ? { seed: cfg.seed } : {}),
      onCrash: () => {
        io.err(log("FATAL", "console-initiated crash"));
        crash();
      },
    });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    io.err(log("FATAL", err.code === "EADDRINUSE" ? `${err.message}: a port is already in use; pass other -ports / -grpc` : err.message));
    return 1;
  }
  const grpc = emu.grpc!;
  io.out(log("INFO", `Started GRPC server at 127.0.0.1:${grpc.port}, security: Local, auth: ${grpc.token ? "+token" : "none"}`));
  if (emu.discoveryPath) io.out(log("INFO", `Advertising in: ${emu.discoveryPath}`));
  if (fromSnapshot) {
    try {
      await emu.device.snapshots.load(snapshotName);
      io.out(log("INFO", `Successfully loaded snapshot '${snapshotName}'`));
    } catch (e) {
      io.out(log("WARNING", `Failed to load snapshot '${snapshotName}' (${coerceError(e).message}); booted cold`));
    }
  }
  io.out(log("INFO", `Boot completed in ${Date.now() - started} ms`));
  const timers = injectFaults(emu, cfg, io, crash);

  // Console `kill` and SIGTERM/SIGINT shut down gracefully (saving the quick-boot snapshot unless told
  // not to); gRPC setVmState(SHUTDOWN) has already stopped the device, so there is nothing to save.
  let shuttingDown = false;
  const shutdown = async (why: string): Promise<void> => {
    if (shuttingDown) return;
    shuttingDown = true;
    io.out(log("INFO", `Shutting down (${why})`));
    if (saveOnExit && !emu.device.isClosed) {
      await emu.device.snapshots.save(snapshotName).then(
        () => io.out(log("INFO", `Saved snapshot '${snapshotName}'`)),
        (e: unknown) => io.out(log("WARNING", `Could not save snapshot '${snapshotName}': ${coerceError(e).message}`)),
      );
    }
    await emu.close();
  };
  emu.setKillHandler(() => void shutdown("console kill"));
  void stopSignal.then((sig) => shutdown(`received ${sig}`));
  await emu.whenStopped;
  for (const t of timers) clearTimeout(t);
  return 0;
}

/** 8554 for console 5554, and the same offset for any other console port; a free port when that one is taken. */
async function defaultGrpcPort(consolePort: number): Promise<number> {
  const p = consolePort + 3000;
  return p <= 65535 && (await portFree(p)) ? p : 0;
}

function injectFaults(emu: SimEmulator, cfg: EmulatorEnvConfig, io: EmulatorIO, crash: () => void): NodeJS.Timeout[] {
  const f = cfg.faults;
  if (f.tapDrop !== undefined) emu.device.faults.setTapDropRate(f.tapDrop);
  const timers: NodeJS.Timeout[] = [];
  const at = (ms: number | undefined, what: () => void) => {
    if (ms !== undefined) timers.push(setTimeout(what, ms));
  };
  at(f.hangAfterMs, () => emu.setVmStopped(true));
  at(f.appCrashAfterMs, () => emu.device.faults.crashApp());
  at(f.crashAfterMs, () => {
    io.err(log("FATAL", "injected crash (FARM_EMULATOR_FAULTS)"));
    crash();
  });
  return timers;
}

/** The first even port in 5554..5584 with it and the next one free, as the emulator picks its ports. */
async function firstFreeConsolePort(): Promise<number | undefined> {
  for (let p = FIRST_CONSOLE_PORT; p <= LAST_CONSOLE_PORT; p += 2) {
    if ((await portFree(p)) && (await portFree(p + 1))) return p;
  }
  return undefined;
}

