/** The three settings tables (`settings get|put|delete|list|reset`), preset like a fresh emulator. */

export type SettingsNamespace = "system" | "secure" | "global";
export const SETTINGS_NAMESPACES: readonly SettingsNamespace[] = ["system", "secure", "global"];

const DEFAULTS: Record<SettingsNamespace, Record<string, string>> = {
  system: {
    accelerometer_rotation: "0",
    user_rotation: "0",
    screen_brightness: "102",
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
  },
  global: {
    adb_enabled: "1",
    airplane_mode_on: "0",
    animator_duration_scale: "1.0",
    transition_animation_scale: "1.0",
    window_animation_scale: "1.0",
    device_provisioned: "1",
    stay_on_while_plugged_in: "7",
    package_verifier_enable: "0",
  },
};

export class SettingsStore {
  private readonly tables = new Map<SettingsNamespace, Map<string, string>>();

  constructor(androidId: string) {
    for (const ns of SETTINGS_NAMESPACES) this.tables.set(ns, new Map(Object.entries(DEFAULTS[ns])));
    this.tables.get("secure")!.set("android_id", androidId);
  }

  get(ns: SettingsNamespace, key: string): string | undefined {
    return this.tables.get(ns)!.get(key);
  }

  put(ns: SettingsNamespace, key: string, value: string): void {
    this.tables.get(ns)!.set(key, value);
  }

  delete(ns: SettingsNamespace, key: string): boolean {
    return this.tables.get(ns)!.delete(key);
  }

  list(ns: SettingsNamespace): [string, string][] {
    return [...this.tables.get(ns)!.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** Back to the defaults of a fresh device (the `mode`/package argument of `settings reset` is not modelled further). */
  reset(ns: SettingsNamespace): void {
    const keep = ns === "secure" ? this.get("secure", "android_id") : undefined;
    this.tables.set(ns, new Map(Object.entries(DEFAULTS[ns])));
    if (keep !== undefined) this.put("secure", "android_id", keep);
  }

  saveState(): Record<SettingsNamespace, [string, string][]> {
    const out = {} as Record<SettingsNamespace, [string, string][]>;
    for (const ns of SETTINGS_NAMESPACES) out[ns] = [...this.tables.get(ns)!.entries()];
    return out;
  }

  restoreState(state: Record<SettingsNamespace, readonly [string, string][]>): void {
    for (const ns of SETTINGS_NAMESPACES) this.tables.set(ns, new Map(state[ns]));
  }

  /** Display rotation 0..3: `user_rotation` applies while `accelerometer_rotation` is 0 (as on a real device). */
  rotation(): 0 | 1 | 2 | 3 {
    if (this.get("system", "accelerometer_rotation") === "1") return 0;
    const r = Number(this.get("system", "user_rotation") ?? "0");
    return (Number.isInteger(r) && r >= 0 && r <= 3 ? r : 0) as 0 | 1 | 2 | 3;
  }
}
