/**
 * Where a worker's devices come from: the adb server (`AdbDriver`, the default) or, for the scale benchmark,
 * any other source of `Device`s with the same tracking interface (FakeDevices, which pass the driver's
 * conformance tests). The worker's code above this line cannot tell them apart.
 */
import type { Device, DeviceChange } from "@farm/adb";

export interface DeviceSource {
  trackDevices(listener: (ev: DeviceChange) => void): { close(): void };
  device(serial: string): Device;
  close(): Promise<void>;
}

/** A fixed set of in-memory devices, all online from the start (the scale benchmark's hosts). */
export class StaticDeviceSource implements DeviceSource {
  private readonly bySerial: Map<string, Device>;
  constructor(devices: readonly Device[]) {
    this.bySerial = new Map(devices.map((d) => [d.serial, d]));
  }
  trackDevices(listener: (ev: DeviceChange) => void): { close(): void } {
    const t = setImmediate(() => {
      for (const serial of this.bySerial.keys()) listener({ kind: "add", serial, state: "device" } as DeviceChange);
    });
    return { close: () => clearImmediate(t) };
  }
  device(serial: string): Device {
    const d = this.bySerial.get(serial);
    if (!d) throw new Error(`no device ${serial} in this source`);
    return d;
  }
  async close(): Promise<void> {}
}
