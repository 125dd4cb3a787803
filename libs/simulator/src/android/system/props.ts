/** System properties (`getprop` / `setprop`), preset like a booted API 29 x86_64 `google_apis` userdebug emulator. */
export class SystemProperties {
  private readonly values = new Map<string, string>();

  constructor(serial: string, screen: { width: number; height: number }) {
    const preset: Record<string, string> = {
      "sys.boot_completed": "1",
      "dev.bootcomplete": "1",
      "init.svc.bootanim": "stopped",
      "service.bootanim.exit": "1",
      "ro.build.version.sdk": "29",
      "ro.build.version.release": "10",
      "ro.build.type": "userdebug",
      "ro.build.tags": "test-keys",
      "ro.build.fingerprint": "farm/sim/simdev:10/QSR1.190920.001/5891938:userdebug/test-keys",
      "ro.product.name": "sim",
      "ro.product.model": "simmodel",
      "ro.product.device": "simdev",
      "ro.product.manufacturer": "farm",
      "ro.product.brand": "farm",
      "ro.product.cpu.abi": "x86_64",
      "ro.product.cpu.abilist": "x86_64,x86",
      "ro.hardware": "ranchu",
      "ro.kernel.qemu": "1",
      "ro.serialno": serial,
      "ro.boot.serialno": serial,
      "ro.sf.lcd_density": "160",
      "ro.debuggable": "1",
      // A userdebug image, as AndroidWorld's emulators: adbd starts as shell and `adb root` may restart it as root.
      "ro.secure": "1",
      "ro.adb.secure": "0",
      "persist.sys.timezone": "UTC",
      "persist.sys.locale": "en-US",
      "sim.screen.size": `${screen.width}x${screen.height}`,
    };
    for (const [k, v] of Object.entries(preset)) this.values.set(k, v);
  }

  get(key: string): string | undefined {
    return this.values.get(key);
  }

  set(key: string, value: string): void {
    this.values.set(key, value);
  }

  saveState(): [string, string][] {
    return [...this.values.entries()];
  }

  restoreState(entries: readonly [string, string][]): void {
    this.values.clear();
    for (const [k, v] of entries) this.values.set(k, v);
  }

  /** All properties sorted by key, as `getprop` lists them. */
  entries(): [string, string][] {
    return [...this.values.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
}
