/**
 * The three settings tables (`settings get|put|delete|list|reset`), preset like a fresh emulator image
 * (a `google_apis` x86_64 one: Wi-Fi and mobile data on, Bluetooth off, brightness 102 of 255, manual).
 * Listeners (`onChange`) hear every write, whoever makes it: `settings put`, `svc`, an app (the Settings
 * app follows the provider as Android's does), a snapshot load.
 */

export type SettingsNamespace = "system" | "secure" | "global";
export const SETTINGS_NAMESPACES: readonly SettingsNamespace[] = ["system", "secure", "global"];

const DEFAULTS: Record<SettingsNamespace, Record<string, string>> = {
  system: {
    accelerometer_rotation: "0",
    user_rotation: "0",
    screen_brightness: "102",
    screen_brightness_mode: "0",
    screen_off_timeout: "2147483647",
    show_touches: "0",
    pointer_location: "0",
    font_scale: "1.0",
    haptic_feedback_enabled: "0",
  },
  secure: {
    android_id: "",
    enabled_accessibility_services: "",
    accessibility_enabled: "0",
    default_input_method: "com.android.inputmethod.latin/.LatinIME",
    immersive_mode_confirmations: "confirmed",
    location_mode: "3",
    ui_night_mode: "1",
  },
  global: {
    adb_enabled: "1",
    airplane_mode_on: "0",
    bluetooth_on: "0",
    mobile_data: "1",
    wifi_on: "1",
    zen_mode: "0",
    low_power: "0",
    animator_duration_scale: "1.0",
    transition_animation_scale: "1.0",
    window_animation_scale: "1.0",
    device_provisioned: "1",
    stay_on_while_plugged_in: "7",
    package_verifier_enable: "0",
  },
};

/** A change of one setting (`key` "*" when a whole namespace was reset or a snapshot loaded). */
export type SettingsListener = (ns: SettingsNamespace, key: string) => void;

export class SettingsStore {
  private readonly tables = new Map<SettingsNamespace, Map<string, string>>();
  private readonly listeners = new Set<SettingsListener>();

  constructor(androidId: string) {
    for (const ns of SETTINGS_NAMESPACES) this.tables.set(ns, new Map(Object.entries(DEFAULTS[ns])));
    this.tables.get("secure")!.set("android_id", androidId);
  }

  get(ns: SettingsNamespace, key: string): string | undefined {
    return this.tables.get(ns)!.get(key);
  }

  put(ns: SettingsNamespace, key: string, value: string): void {
    this.tables.get(ns)!.set(key, value);
    this.notify(ns, key);
  }

  delete(ns: SettingsNamespace, key: string): boolean {
    const had = this.tables.get(ns)!.delete(key);
    if (had) this.notify(ns, key);
    return had;
  }

  /** Calls `listener` after every change; returns what removes it (an app process removes its own when it dies). */
  onChange(listener: SettingsListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  private notify(ns: SettingsNamespace, key: string): void {
    for (const l of [...this.listeners]) l(ns, key);
  }

  list(ns: SettingsNamespace): [string, string][] {
    return [...this.tables.get(ns)!.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** Back to the defaults of a fresh device (the `mode`/package argument of `settings reset` is not modelled further). */
  reset(ns: SettingsNamespace): void {
    const keep = ns === "secure" ? this.get("secure", "android_id") : undefined;
    this.tables.set(ns, new Map(Object.entries(DEFAULTS[ns])));
    if (keep !== undefined) this.tables.get("secure")!.set("android_id", keep);
    this.notify(ns, "*");
  }

  saveState(): Record<SettingsNamespace, [string, string][]> {
    const out = {} as Record<SettingsNamespace, [string, string][]>;
    for (const ns of SETTINGS_NAMESPACES) out[ns] = [...this.tables.get(ns)!.entries()];
    return out;
  }

  restoreState(state: Record<SettingsNamespace, readonly [string, string][]>): void {
    for (const ns of SETTINGS_NAMESPACES) this.tables.set(ns, new Map(state[ns]));
    for (const ns of SETTINGS_NAMESPACES) this.notify(ns, "*");
  }

  /** Display rotation 0..3: `user_rotation` applies while `accelerometer_rotation` is 0 (as on a real device). */
  rotation(): 0 | 1 | 2 | 3 {
    if (this.get("system", "accelerometer_rotation") === "1") return 0;
    const r = Number(this.get("system", "user_rotation") ?? "0");
    return (Number.isInteger(r) && r >= 0 && r <= 3 ? r : 0) as 0 | 1 | 2 | 3;
  }
}
