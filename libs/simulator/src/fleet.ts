import type { Logger } from "@farm/log";
import { adbServerDevices } from "@farm/local-services";
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
    await waitListedAsDevice(opts.adbPort, opts.adbHost ?? "127.0.0.1", devices.map((d) => d.serial), 10_000);
  } catch (e) {
    await close();
    throw e;
  }
  return { devices, close };
}

/**
 * A device counts itself online once it has answered the handshake, but the server may still list
 * it as `offline` for a moment; callers expect `adb devices` to show every device ready.
 */
async function waitListedAsDevice(adbPort: number, adbHost: string, serials: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const listed = await adbServerDevices(adbPort, adbHost).catch(() => new Map<string, string>());
    const notReady = serials.filter((s) => listed.get(s) !== "device");
    if (notReady.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`adb server on ${adbHost}:${adbPort} does not list ${notReady.join(", ")} as 'device' after ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
