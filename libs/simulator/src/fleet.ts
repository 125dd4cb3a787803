import type { Logger } from "@farm/log";
import { SimDevice, type LatencyProfile } from "./device.ts";
import { SimEmulator, consolePortsFrom } from "./emulator/sim-emulator.ts";

export interface SimFleetOptions {
  adbPort: number;
  adbHost?: string;
  count: number;
  /** Base seed; device i gets seed + i (default 1). */
  seed?: number;
  screen?: { width: number; height: number };
  latencyProfile?: LatencyProfile;
  logger?: Logger;
  /**
   * Whole emulators (console on N, adb on N+1, discovery file) instead of bare ADB devices.
   * `basePort`: device i gets console port basePort + 2i (default: free pairs).
   * `grpc`: serve the gRPC endpoint (default true); device i on grpcBasePort + i (default: basePort
   * + 3000 + 2i when basePort is given, as emulator-5554 has gRPC 8554; else free ports).
   */
  emulator?: { basePort?: number; grpc?: boolean; grpcBasePort?: number; discovery?: boolean; tokenPath?: string };
}

export interface SimFleet {
  readonly devices: SimDevice[];
  /** With `emulator`: the emulators, in the same order as `devices` (else empty). */
  readonly emulators: SimEmulator[];
  close(): Promise<void>;
}

/** How many devices register at once; keeps a 64-device start from flooding the adb server. */
const START_BATCH = 16;

/** Starts `count` simulated emulators registered with the adb server; resolves once all are online. */
export async function startSimulatedDevices(opts: SimFleetOptions): Promise<SimFleet> {
  const devices: SimDevice[] = [];
  const emulators: SimEmulator[] = [];
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await Promise.all([...emulators.map((e) => e.close()), ...devices.map((d) => d.close())]);
  };
  if (opts.emulator) {
    await startEmulators(opts, opts.emulator, emulators).catch(async (e: unknown) => {
      await close();
      throw e;
    });
    devices.push(...emulators.map((e) => e.device));
    return { devices, emulators, close };
  }
  try {
    for (let i = 0; i < opts.count; i += START_BATCH) {
      const batch = Array.from({ length: Math.min(START_BATCH, opts.count - i) }, (_, j) =>
        SimDevice.start({
          adbPort: opts.adbPort,
          seed: (opts.seed ?? 1) + i + j,
          ...(opts.adbHost ? { adbHost: opts.adbHost } : {}),
          ...(opts.screen ? { screen: opts.screen } : {}),
          ...(opts.latencyProfile ? { latencyProfile: opts.latencyProfile } : {}),
          ...(opts.logger ? { logger: opts.logger } : {}),
        }),
      );
      const settled = await Promise.allSettled(batch);
      for (const r of settled) if (r.status === "fulfilled") devices.push(r.value);
      const failed = settled.find((r) => r.status === "rejected");
      if (failed) throw failed.reason;
    }
  } catch (e) {
    await close();
    throw e;
  }
  return { devices, emulators, close };
}

async function startEmulators(opts: SimFleetOptions, emu: NonNullable<SimFleetOptions["emulator"]>, into: SimEmulator[]): Promise<void> {
  const ports = emu.basePort === undefined ? undefined : consolePortsFrom(emu.basePort, opts.count);
  const grpcPort = (i: number): number => {
    if (emu.grpcBasePort !== undefined) return emu.grpcBasePort + i;
    return ports ? ports[i]! + 3000 : 0;
  };
  if (emu.grpc !== false && emu.grpcBasePort !== undefined && (!Number.isInteger(emu.grpcBasePort) || emu.grpcBasePort < 1024 || emu.grpcBasePort + opts.count - 1 > 65535)) {
    throw new Error(`--grpc-base-port must be an integer >= 1024 with room for ${opts.count} ports below 65536, got ${emu.grpcBasePort}`);
  }
  for (let i = 0; i < opts.count; i += START_BATCH) {
    const batch = Array.from({ length: Math.min(START_BATCH, opts.count - i) }, (_, j) =>
      SimEmulator.start({
        adbPort: opts.adbPort,
        seed: (opts.seed ?? 1) + i + j,
        ...(ports ? { consolePort: ports[i + j]! } : {}),
        ...(opts.adbHost ? { adbHost: opts.adbHost } : {}),
        ...(opts.screen ? { screen: opts.screen } : {}),
        ...(opts.latencyProfile ? { latencyProfile: opts.latencyProfile } : {}),
        ...(opts.logger ? { logger: opts.logger } : {}),
        ...(emu.discovery === false ? { discovery: false } : {}),
        ...(emu.tokenPath ? { tokenPath: emu.tokenPath } : {}),
        grpc: emu.grpc === false ? false : { port: grpcPort(i + j) },
      }),
    );
    const settled = await Promise.allSettled(batch);
    for (const r of settled) if (r.status === "fulfilled") into.push(r.value);
    const failed = settled.find((r) => r.status === "rejected");
    if (failed) throw portError(failed.reason);
  }
}

/** A taken port names the port and what to do, rather than a bare EADDRINUSE. */
function portError(e: unknown): unknown {
  const err = e as NodeJS.ErrnoException & { port?: number };
  if (err?.code === "EADDRINUSE") return new Error(`port ${err.port ?? "?"} is already in use; choose another --base-port / --grpc-base-port (device i: console base+2i, adb base+2i+1, gRPC grpc-base+i)`);
  return e;
}

