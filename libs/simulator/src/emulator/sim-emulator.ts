/**
 * One whole simulated emulator with a real emulator's port layout: console on port N (even), the
 * ADB device on N+1 (serial `emulator-N`, registered with the adb server), the gRPC endpoint, and
 * its discovery file. Like the emulator's `-ports C,A`, the adb port may be any other port A: the
 * serial is then `emulator-(A-1)`, whatever C is (adb names emulators after their adb port). `farm sim` starts many of these in one process; the `emulator` command one.
 * It stops as a whole, whoever stops it: close(), console `kill`, gRPC setVmState(SHUTDOWN).
 */
import { freePort, isReservedPort } from "@farm/net-ports";
import { silentLogger, type Logger } from "@farm/log";
import { SimDevice, type LatencyProfile } from "../device.ts";
import { startEmulatorGrpc, type EmulatorGrpcServer } from "../grpc/emulator-grpc-server.ts";
import type { DeviceSnapshots } from "../snapshot/device-snapshots.ts";
import { defaultAuthTokenPath } from "./console/auth-token.ts";
import type { ConsoleBackend, ConsoleSnapshots } from "./console/backend.ts";
import { EmulatorConsole } from "./console/console-server.ts";
import { DiscoveryFile } from "./discovery.ts";
import { coerceError } from "@farm/errors";

export interface SimEmulatorOptions {
  /** The adb server to register with. */
  adbPort: number;
  adbHost?: string;
  /** Console port N; the device's adb port is N+1. Default: a free pair outside the reserved ranges. */
  consolePort?: number;
  /** The device's adb port when it is not consolePort+1 (the emulator's `-ports C,A`); needs consolePort. */
  devicePort?: number;
  seed?: number;
  screen?: { width: number; height: number };
  latencyProfile?: LatencyProfile;
  /** AVD name and folder for `avd name`/`avd path` and the discovery file (default `farm_sim_<N>`, ""). */
  avdName?: string;
  avdDir?: string;
  /** The emulator's -read-only: snapshot commands are refused. */
  readOnly?: boolean;
  /** Write the discovery file (default true). */
  discovery?: boolean;
  /** The command line written to the discovery file. */
  cmdline?: string;
  /** Console auth token file (default ~/.emulator_console_auth_token). */
  tokenPath?: string;
  /** false: do not wait for the adb server to attach (the `emulator` command may start before it). */
  awaitOnline?: boolean;
  /** The device's snapshot folder (an AVD's `snapshots/`); default: the device's own temp folder. */
  snapshotDir?: string;
  /**
   * Serve the emulator's gRPC endpoint: `port` (0 or absent: a free one), `token` (require
   * `authorization: Bearer <token>`, advertised as grpc.token). false or absent: no gRPC.
   */
  grpc?: { port?: number; token?: string; withoutInputStream?: boolean } | false;
  /** Console `kill` (default: close this emulator). */
  onKill?: (emu: SimEmulator) => void;
  /** Console `crash` (default: close this emulator abruptly). */
  onCrash?: (emu: SimEmulator) => void;
  logger?: Logger;
}

const PAIR_ATTEMPTS = 50;

export class SimEmulator {
  private discovery: DiscoveryFile | undefined;
  private grpcServer: EmulatorGrpcServer | undefined;
  private vmStopped = false;
  private killHandler: (() => void) | undefined;
  private closing: Promise<void> | undefined;
  /** Resolves once the emulator has stopped and cleaned up, however it was stopped. */
  readonly whenStopped: Promise<void>;

  private constructor(
    readonly device: SimDevice,
    readonly console: EmulatorConsole,
    private readonly opts: SimEmulatorOptions,
    private readonly log: Logger,
  ) {
    // gRPC setVmState(SHUTDOWN) closes the device itself: the rest of the emulator follows.
    this.whenStopped = device.whenClosed.then(() => this.close());
  }

  get serial(): string {
    return this.device.serial;
  }
  get consolePort(): number {
    return this.console.port;
  }
  get adbPort(): number {
    return this.device.port;
  }
  get avdName(): string {
    return this.opts.avdName ?? `farm_sim_${this.consolePort}`;
  }
  get discoveryPath(): string | undefined {
    return this.discovery?.path;
  }
  /** The gRPC endpoint, when serving one. */
  get grpc(): EmulatorGrpcServer | undefined {
    return this.grpcServer;
  }

  static async start(opts: SimEmulatorOptions): Promise<SimEmulator> {
    const log = opts.logger ?? silentLogger;
    let emu: SimEmulator | undefined;
    const backend = lazyBackend(() => emu);
    if (opts.devicePort !== undefined && opts.consolePort === undefined) throw new Error("devicePort needs consolePort (the emulator's -ports C,A)");
    const { console: con, device } = opts.consolePort === undefined ? await startOnFreePair(opts, backend) : await startOnPair(opts.consolePort, opts, backend);
    emu = new SimEmulator(device, con, opts, log.child({ component: "sim-emulator", serial: device.serial }));
    try {
      if (opts.grpc) {
        emu.grpcServer = await startEmulatorGrpc(device, {
          port: opts.grpc.port ?? 0,
          avdName: emu.avdName,
          ...(opts.grpc.token !== undefined ? { token: opts.grpc.token } : {}),
          ...(opts.grpc.withoutInputStream ? { withoutInputStream: true } : {}),
          ...(opts.logger ? { logger: opts.logger } : {}),
        }).catch((e: NodeJS.ErrnoException) => {
          throw Object.assign(new Error(`gRPC port ${opts.grpc ? opts.grpc.port : "?"}: ${e.message}`), { code: /EADDRINUSE|address already in use/i.test(e.message) ? "EADDRINUSE" : e.code, port: opts.grpc ? opts.grpc.port : undefined });
        });
      }
      if (opts.discovery !== false) {
        try {
          emu.discovery = DiscoveryFile.write({
            consolePort: con.port,
            adbPort: device.port,
            avdName: emu.avdName,
            avdDir: opts.avdDir ?? "",
            ...(opts.cmdline ? { cmdline: opts.cmdline } : {}),
            ...(emu.grpcServer ? { grpcPort: emu.grpcServer.port } : {}),
            ...(emu.grpcServer?.token !== undefined ? { grpcToken: emu.grpcServer.token } : {}),
          });
        } catch (e) {
          // As the emulator: an unwritable discovery folder is logged, the device still runs.
          emu.log.warn({ event: "discovery:unwritable", err: coerceError(e).message }, "could not write the discovery file");
        }
      }
    } catch (e) {
      await emu.close();
      throw e;
    }
    return emu;
  }

  /** Stops the console and the device (adb sees it go) and removes the discovery file; idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.discovery?.remove();
      await Promise.all([this.console.close(), this.device.close(), this.grpcServer?.close()]);
    })();
    return this.closing;
  }

  /** The console's view of this emulator. */
  backend(): ConsoleBackend {
    const emu = this;
    return {
      get avdName() {
        return emu.avdName;
      },
      avdDir: this.opts.avdDir ?? "",
      readOnly: this.opts.readOnly ?? false,
      snapshots: consoleSnapshots(this.device.snapshots),
      discoveryPath: () => this.discovery?.path,
      isRunning: () => !this.vmStopped,
      stopVm: () => this.setVmStopped(true),
      startVm: () => this.setVmStopped(false),
      rotate: () => this.rotateClockwise(),
      kill: () => (this.killHandler ? this.killHandler() : this.opts.onKill ? this.opts.onKill(this) : void this.close()),
      crash: () => (this.opts.onCrash ? this.opts.onCrash(this) : void this.close()),
    };
  }

  /** Replaces what console `kill` does (the `emulator` command saves its snapshot first). */
  setKillHandler(fn: () => void): void {
    this.killHandler = fn;
  }

  /** `avd stop`: the VM pauses, so adb gets no answer until `avd start` (the simulator's hang fault). */
  setVmStopped(stopped: boolean): void {
    this.vmStopped = stopped;
    this.device.faults.hang(stopped);
    this.log.info({ event: stopped ? "vm:stopped" : "vm:started" }, stopped ? "virtual device stopped" : "virtual device started");
  }

  /** Turning the device clockwise makes the display rotate to ROTATION_270, then 180, 90, 0. */
  private rotateClockwise(): void {
    const sys = this.device.android.system;
    const next = (sys.rotation() + 3) % 4;
    sys.settings.put("system", "accelerometer_rotation", "0");
    sys.settings.put("system", "user_rotation", String(next));
    sys.onSettingChanged("system", "user_rotation");
  }
}

/** The console's `avd snapshot …` on the device's snapshots. */
function consoleSnapshots(snaps: DeviceSnapshots): ConsoleSnapshots {
  return {
    directory: snaps.dir,
    list: async () => (await snaps.list()).map((s) => ({ name: s.name, sizeBytes: s.sizeBytes, createdAt: new Date(s.createdAtMs) })),
    save: async (name) => void (await snaps.save(name)),
    load: (name) => snaps.load(name),
    delete: (name) => snaps.delete(name),
    lastLoaded: () => snaps.current,
  };
}

/** The console needs the backend before the emulator object exists (both are built on the same ports). */
function lazyBackend(get: () => SimEmulator | undefined): ConsoleBackend {
  const b = () => {
    const emu = get();
    if (!emu) throw new Error("the virtual device is still starting");
    return emu.backend();
  };
  return {
    get avdName() {
      return b().avdName;
    },
    get avdDir() {
      return b().avdDir;
    },
    get readOnly() {
      return b().readOnly;
    },
    get snapshots() {
      return b().snapshots;
    },
    discoveryPath: () => b().discoveryPath(),
    isRunning: () => b().isRunning(),
    stopVm: () => b().stopVm(),
    startVm: () => b().startVm(),
    rotate: () => b().rotate(),
    kill: () => b().kill(),
    crash: () => b().crash(),
  };
}

async function startOnPair(consolePort: number, opts: SimEmulatorOptions, backend: ConsoleBackend): Promise<{ console: EmulatorConsole; device: SimDevice }> {
  if (!Number.isInteger(consolePort) || consolePort < 1 || consolePort > 65534) throw new Error(`console port must be an integer in 1..65534, got ${consolePort}`);
  const devicePort = opts.devicePort ?? consolePort + 1;
  if (!Number.isInteger(devicePort) || devicePort < 2 || devicePort > 65535 || devicePort === consolePort) {
    throw new Error(`adb port must be an integer in 2..65535 other than the console port ${consolePort}, got ${devicePort}`);
  }
  const con = await EmulatorConsole.listen(consolePort, {
    backend,
    tokenPath: opts.tokenPath ?? defaultAuthTokenPath(),
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
  try {
    const device = await SimDevice.start({
      adbPort: opts.adbPort,
      port: devicePort,
      seed: opts.seed ?? consolePort,
      ...(opts.adbHost ? { adbHost: opts.adbHost } : {}),
      ...(opts.screen ? { screen: opts.screen } : {}),
      ...(opts.latencyProfile ? { latencyProfile: opts.latencyProfile } : {}),
      ...(opts.awaitOnline === false ? { awaitOnline: false } : {}),
      ...(opts.snapshotDir ? { snapshotDir: opts.snapshotDir } : {}),
      ...(opts.logger ? { logger: opts.logger } : {}),
    });
    return { console: con, device };
  } catch (e) {
    await con.close();
    throw e;
  }
}

/** An even console port N with N and N+1 both free (retrying when another process takes one meanwhile). */
async function startOnFreePair(opts: SimEmulatorOptions, backend: ConsoleBackend): Promise<{ console: EmulatorConsole; device: SimDevice }> {
  for (let attempt = 1; ; attempt++) {
    const p = await freePort();
    const even = p - (p % 2);
    if (even < 1024 || isReservedPort(even) || isReservedPort(even + 1)) continue;
    try {
      return await startOnPair(even, opts, backend);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EADDRINUSE" || attempt >= PAIR_ATTEMPTS) throw e;
    }
  }
}

/** `start N`, `N+2`, …: the console ports of `count` devices from a base port, checked up front. */
export function consolePortsFrom(basePort: number, count: number): number[] {
  if (!Number.isInteger(basePort) || basePort < 1024 || basePort % 2 !== 0) throw new Error(`--base-port must be an even integer >= 1024, got ${basePort}`);
  const last = basePort + 2 * (count - 1) + 1;
  if (last > 65535) throw new Error(`--base-port ${basePort} with ${count} devices needs ports up to ${last}, beyond 65535`);
  return Array.from({ length: count }, (_, i) => basePort + 2 * i);
}
