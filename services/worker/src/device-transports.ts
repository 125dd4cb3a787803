/**
 * farm_device_transports{transport}: how many bound devices send actions over the emulator's gRPC and
 * how many over the adb server. Decided once per bind, when the device is first ready (the driver's gRPC endpoint for the serial).
 */
import type { DeviceSource } from "./device-source.ts";
import type { FarmMetrics, Transport } from "@farm/metrics";

const RECHECK_MS = 3000;

export class DeviceTransports {
  private readonly bySerial = new Map<string, Transport>();
  private readonly rechecks = new Map<string, NodeJS.Timeout>();

  constructor(private readonly driver: DeviceSource, private readonly metrics: FarmMetrics) {}

  /**
   * Records the device's transport; called on each state change of a bound device. A device seen on adb is
   * looked at again (its emulator may have advertised gRPC since; the driver caches discovery reads briefly).
   */
  bound(serial: string): void {
    const before = this.bySerial.get(serial);
    if (before === "grpc") return;
    let t: Transport = "adb";
    try {
      // AdbDevice knows its gRPC endpoint; a device without that method (in-memory) is adb.
      const dev = this.driver.device(serial) as { grpcEndpoint?: () => unknown };
      if (dev.grpcEndpoint?.()) t = "grpc";
    } catch {
      // An unreadable discovery file means no gRPC for this device: adb it is.
    }
    if (t === "adb" && before === undefined) {
      // Once per bind: the driver caches discovery reads for ~2 s, so an emulator that advertised gRPC just now shows up next read.
      const timer = setTimeout(() => {
        this.rechecks.delete(serial);
        if (this.bySerial.has(serial)) this.bound(serial);
      }, RECHECK_MS);
      timer.unref();
      this.rechecks.set(serial, timer);
    }
    if (before === t) return;
    this.bySerial.set(serial, t);
    this.publish();
  }

  /** The transport last recorded for a bound device (adb until known). */
  transportOf(serial: string): Transport {
    return this.bySerial.get(serial) ?? "adb";
  }

  unbound(serial: string): void {
    clearTimeout(this.rechecks.get(serial));
    this.rechecks.delete(serial);
    if (this.bySerial.delete(serial)) this.publish();
  }

  private publish(): void {
    const counts: Partial<Record<Transport, number>> = {};
    for (const t of this.bySerial.values()) counts[t] = (counts[t] ?? 0) + 1;
    this.metrics.setDeviceTransports(counts);
  }
}
