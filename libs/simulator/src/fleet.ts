import type { Logger } from "@farm/log";
import { SimDevice, type LatencyProfile } from "./device.ts";

export interface SimFleetOptions {
  adbPort: number;
  adbHost?: string;
  count: number;
  /** Base seed; device i gets seed + i (default 1). */
  seed?: number;
  screen?: { width: number; height: number };
  latencyProfile?: LatencyProfile;
  logger?: Logger;
}

export interface SimFleet {
  readonly devices: SimDevice[];
  close(): Promise<void>;
}

/** How many devices register at once; keeps a 64-device start from flooding the adb server. */
const START_BATCH = 16;

/** Starts `count` simulated emulators registered with the adb server; resolves once all are online. */
export async function startSimulatedDevices(opts: SimFleetOptions): Promise<SimFleet> {
  const devices: SimDevice[] = [];
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await Promise.all(devices.map((d) => d.close()));
  };
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
  return { devices, close };
}
