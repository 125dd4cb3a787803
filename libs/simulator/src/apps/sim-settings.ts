/**
 * Sim Settings (`com.farm.simapps.settings`), a settings app with toggles and nested screens, built with
 * the widget toolkit (ui/). One activity (MainActivity); screens stack as fragments do, and Up or BACK
 * pops one. Screens (the main list is longer than the screen and scrolls):
 *   main      Network & internet >, Connected devices >, Display >, Do not disturb, Battery saver,
 *             Location, Security >, Auto-rotate screen, Reset options (a dialog), System >, two labels
 *             (`>`: a row that opens a screen, drawn with a chevron, not part of its text)
 *   network   Internet >, Airplane mode, Mobile data, Hotspot;   internet: Wi-Fi (and its networks)
 *   devices   Bluetooth, NFC;   system: About labels
 *   display   Dark theme, brightness (DIMMER / BRIGHTER, 0–100 by 10), Adaptive brightness (checkbox),
 *             Font size > (font: Small, Default, Large, Largest as radio buttons)
 *   security  a password field (the password variant) and SAVE
 * Every change logs `json_extra: {"<name>": value}` (switches 0/1, `brightness`, `font_size` 0–3,
 * `password_set` 1, `reset` 1). Goals (RL_TASK_GAME_CONFIG): `{"toggle": NAME, "on": BOOL}` (NAME one of
 * TOGGLE_NAMES), `{"brightness": N}`, `{"font_size": "small"|"default"|"large"|"largest"}`,
 * `{"password_set": true}`; a change of that setting (or a reset) that reaches it logs `reward: 1` and
 * `episode end`, once per app run.
 *
 * The same screens are Android's Settings app, `com.android.settings` (`createAndroidSettings`, a system app):
 * there every switch that Android keeps in the settings provider reads and writes it, as Android's Settings
 * does (PROVIDER_KEYS: `global wifi_on`, `bluetooth_on`, `airplane_mode_on`, …), read afresh on every draw, so
 * `svc wifi disable` or `settings put` before or during an episode shows at once and a tap shows in
 * `settings get`; brightness is a slider over `system screen_brightness` (1–255) and the font size is
 * `system font_scale`. Hotspot and NFC are no settings on Android: they stay in the app. Activities: `.Settings`
 * (the main list) and the deep links `am start -a` resolves to (SETTINGS_ACTIVITIES), each opening its screen.
 */
import type { AppFactory, AppHost } from "../android/app-contract.ts";
import type { SettingsNamespace } from "../android/system/settings-store.ts";
import { alertDialog } from "./ui/dialog.ts";
import { UiApp } from "./ui/ui-app.ts";
import type { Box, Widget } from "./ui/widget.ts";
import { appBar, button, checkbox, label, list, panel, row, slider, switchView, textField } from "./ui/widgets.ts";

export const TOGGLE_NAMES = ["wifi", "airplane", "mobile_data", "hotspot", "bluetooth", "nfc", "dnd", "battery_saver", "location", "auto_rotate", "dark_theme", "adaptive_brightness"] as const;
type ToggleName = (typeof TOGGLE_NAMES)[number];
const DEFAULT_ON: readonly ToggleName[] = ["mobile_data", "location", "adaptive_brightness"];
export const FONT_SIZES = ["Small", "Default", "Large", "Largest"] as const;

type ScreenName = "main" | "network" | "internet" | "devices" | "display" | "font" | "security" | "system";
const TITLES: Readonly<Record<ScreenName, string>> = { main: "Sim Settings", network: "Network & internet", internet: "Internet", devices: "Connected devices", display: "Display", font: "Font size", security: "Security", system: "System" };

/** Where each switch lives in the settings provider, with the values Android writes for on and off. */
export const PROVIDER_KEYS: Readonly<Partial<Record<ToggleName, { ns: SettingsNamespace; key: string; on: string; off: string; initial: string }>>> = {
  wifi: { ns: "global", key: "wifi_on", on: "1", off: "0", initial: "1" },
  airplane: { ns: "global", key: "airplane_mode_on", on: "1", off: "0", initial: "0" },
  mobile_data: { ns: "global", key: "mobile_data", on: "1", off: "0", initial: "1" },
  bluetooth: { ns: "global", key: "bluetooth_on", on: "1", off: "0", initial: "0" },
  dnd: { ns: "global", key: "zen_mode", on: "1", off: "0", initial: "0" },
  battery_saver: { ns: "global", key: "low_power", on: "1", off: "0", initial: "0" },
  location: { ns: "secure", key: "location_mode", on: "3", off: "0", initial: "3" },
  auto_rotate: { ns: "system", key: "accelerometer_rotation", on: "1", off: "0", initial: "0" },
  dark_theme: { ns: "secure", key: "ui_night_mode", on: "2", off: "1", initial: "1" },
  adaptive_brightness: { ns: "system", key: "screen_brightness_mode", on: "1", off: "0", initial: "0" },
};
/** `system screen_brightness` as Android's slider sets it: 1 (its minimum) to 255. */
export const BRIGHTNESS_MIN = 1;
export const BRIGHTNESS_MAX = 255;
const BRIGHTNESS_INITIAL = 102;
/** `system font_scale` for Small, Default, Large, Largest (Android's values). */
export const FONT_SCALES = ["0.85", "1.0", "1.15", "1.3"] as const;

/**
 * The activities of `com.android.settings` and the screen each opens; the first is the main one. The intents they
 * take (`am start -a`) are the package's intent filters (android/system/package-manager.ts), which name these classes.
 */
export const SETTINGS_ACTIVITIES: readonly { activity: string; screen: ScreenName }[] = [
  { activity: "Settings", screen: "main" },
  { activity: "Settings$NetworkDashboardActivity", screen: "network" },
  { activity: "Settings$WifiSettingsActivity", screen: "internet" },
  { activity: "Settings$ConnectedDeviceDashboardActivity", screen: "devices" },
  { activity: "Settings$DisplaySettingsActivity", screen: "display" },
  { activity: "Settings$SecurityDashboardActivity", screen: "security" },
  { activity: "Settings$MyDeviceInfoActivity", screen: "system" },
];

/** One row of a screen's list. */
type Entry =
  | { kind: "switch" | "check"; name: ToggleName; text: string }
  | { kind: "link"; to: ScreenName; text: string }
  | { kind: "label"; text: string }
  | { kind: "radio"; size: number }
  | { kind: "dialog"; text: string };

const sw = (name: ToggleName, text: string): Entry => ({ kind: "switch", name, text });
const link = (to: ScreenName): Entry => ({ kind: "link", to, text: TITLES[to] });

type Goal = { kind: "toggle"; name: ToggleName; on: boolean } | { kind: "brightness"; value: number } | { kind: "font"; size: number } | { kind: "password" } | { kind: "none" };

function goalFrom(c: Readonly<Record<string, unknown>>): Goal {
  const has = (k: string): boolean => Object.hasOwn(c, k);
  if (has("toggle") && (TOGGLE_NAMES as readonly unknown[]).includes(c.toggle)) return { kind: "toggle", name: c.toggle as ToggleName, on: c.on !== false };
  if (has("brightness") && typeof c.brightness === "number") return { kind: "brightness", value: c.brightness };
  if (has("font_size") && typeof c.font_size === "string") {
    const size = FONT_SIZES.findIndex((s) => s.toLowerCase() === (c.font_size as string).toLowerCase());
    if (size >= 0) return { kind: "font", size };
  }
  if (c.password_set === true) return { kind: "password" };
  return { kind: "none" };
}

const ROW_DP = 56;

class SimSettings extends UiApp {
  activity = "MainActivity";
  private stack: ScreenName[] = ["main"];
  /** Scroll position of each open screen's list, by its depth in the stack. */
  private firsts: number[] = [0];
  private toggles: Record<string, boolean> = {};
  private brightness = 50;
  private fontSize = 1;
  private password = "";
  private passwordDraft = "";
  private resetDialog = false;
  private readonly goal: Goal;
  private solved = false;

  /**
   * `provider`: Android's Settings (`com.android.settings`), whose switches, brightness and font size are the
   * settings provider's; else Sim Settings, which keeps them in the app. `activity`: the one started.
   */
  constructor(
    host: AppHost,
    private readonly provider = false,
    activity = "MainActivity",
  ) {
    super(host);
    this.goal = goalFrom(host.config);
    this.toggles = Object.fromEntries(TOGGLE_NAMES.map((n) => [n, DEFAULT_ON.includes(n)]));
    if (provider) this.onNewIntent(activity);
    else this.resetAll();
  }

  /** A start of one of the package's activities: Android's Settings opens the screen the activity stands for. */
  onNewIntent(activityClass: string): void {
    if (!this.provider) return;
    const a = SETTINGS_ACTIVITIES.find((x) => x.activity === activityClass) ?? SETTINGS_ACTIVITIES[0]!;
    this.activity = a.activity;
    this.stack = [a.screen];
    this.firsts = [0];
    this.resetDialog = false;
    this.focus(undefined);
  }

  private resetAll(): void {
    this.toggles = Object.fromEntries(TOGGLE_NAMES.map((n) => [n, DEFAULT_ON.includes(n)]));
    this.brightness = 50;
    this.fontSize = 1;
    if (!this.provider) return;
    for (const p of Object.values(PROVIDER_KEYS)) this.host.settings.put(p.ns, p.key, p.initial);
    this.host.settings.put("system", "screen_brightness", String(BRIGHTNESS_INITIAL));
    this.host.settings.put("system", "font_scale", FONT_SCALES[1]);
  }

  state(): unknown {
    return { screen: this.screen, toggles: Object.fromEntries(TOGGLE_NAMES.map((n) => [n, this.on(n)])), brightness: this.level(), fontSize: FONT_SIZES[this.font()], passwordSet: this.password !== "", dialog: this.resetDialog, focused: this.focused, solved: this.solved };
  }

  /** The brightness: 0–100 in Sim Settings, `system screen_brightness` (1–255) in Android's Settings. */
  private level(): number {
    if (!this.provider) return this.brightness;
    const v = Number.parseInt(this.host.settings.get("system", "screen_brightness") ?? "", 10);
    return Number.isFinite(v) ? Math.min(BRIGHTNESS_MAX, Math.max(0, v)) : BRIGHTNESS_INITIAL;
  }

  /** The font size's index in FONT_SIZES (Android's Settings: the scale nearest `system font_scale`). */
  private font(): number {
    if (!this.provider) return this.fontSize;
    const v = Number.parseFloat(this.host.settings.get("system", "font_scale") ?? "1.0");
    let best = 1;
    FONT_SCALES.forEach((f, i) => {
      if (Math.abs(Number(f) - v) < Math.abs(Number(FONT_SCALES[best]) - v)) best = i;
    });
    return best;
  }

  private get screen(): ScreenName {
    return this.stack[this.stack.length - 1]!;
  }

  private on(name: ToggleName): boolean {
    const p = this.provider ? PROVIDER_KEYS[name] : undefined;
    if (p) {
      const v = this.host.settings.get(p.ns, p.key);
      return v !== undefined && v !== "null" && v !== p.off && v !== "";
    }
    return Object.hasOwn(this.toggles, name) && this.toggles[name] === true;
  }

  private entries(s: ScreenName): Entry[] {
    switch (s) {
      case "main":
        return [link("network"), link("devices"), link("display"), sw("dnd", "Do not disturb"), sw("battery_saver", "Battery saver"), sw("location", "Location"), link("security"), sw("auto_rotate", "Auto-rotate screen"), { kind: "dialog", text: "Reset options" }, link("system"), { kind: "label", text: "Sim Settings 1.0" }, { kind: "label", text: "Build SIM.14" }];
      case "network":
        return [link("internet"), sw("airplane", "Airplane mode"), sw("mobile_data", "Mobile data"), sw("hotspot", "Hotspot")];
      case "internet":
        return [sw("wifi", "Wi-Fi"), ...(this.on("wifi") ? ["FarmNet", "CoffeeShop", "Guest"].map((text): Entry => ({ kind: "label", text })) : [])];
      case "devices":
        return [sw("bluetooth", "Bluetooth"), sw("nfc", "NFC")];
      case "display":
        return [
          sw("dark_theme", "Dark theme"),
          { kind: "label", text: this.provider ? `Brightness level: ${Math.round((100 * (this.level() - BRIGHTNESS_MIN)) / (BRIGHTNESS_MAX - BRIGHTNESS_MIN))}%` : `Brightness level: ${this.brightness}/100` },
          { kind: "check", name: "adaptive_brightness", text: "Adaptive brightness" },
          link("font"),
        ];
      case "font":
        return FONT_SIZES.map((_, size): Entry => ({ kind: "radio", size }));
      case "security":
        return [{ kind: "label", text: this.password === "" ? "Screen lock: none" : "Screen lock: password" }];
      case "system":
        return [{ kind: "label", text: "Android version 14" }, { kind: "label", text: "Model: Sim device" }];
    }
  }

  private d(v: number): number {
    return Math.round(v * this.dp);
  }

  protected page(box: Box): Widget {
    const [l, t, r, b] = box;
    const d = (v: number): number => this.d(v);
    const s = this.screen;
    const top = this.stack.length > 1;
    const children: Widget[] = [appBar([l, t, r, t + d(56)], s === "main" && this.provider ? "Settings" : TITLES[s], top ? () => this.back() : undefined)];
    let listTop = t + d(56);
    if (s === "display" && this.provider) {
      children.push(
        slider("brightness", [l, listTop + d(8), r, listTop + d(56)], this.level(), { min: BRIGHTNESS_MIN, max: BRIGHTNESS_MAX, step: 13 }, (v) => this.setLevel(v), { id: "app:id/brightness", desc: "Brightness level", dp: this.dp }),
      );
      listTop += d(64);
    } else if (s === "display") {
      children.push(button("dimmer", [l + d(16), listTop + d(8), l + d(172), listTop + d(56)], "DIMMER", () => this.setBrightness(-10), { id: "app:id/dimmer", desc: "Decrease brightness" }));
      children.push(button("brighter", [l + d(188), listTop + d(8), r - d(16), listTop + d(56)], "BRIGHTER", () => this.setBrightness(10), { id: "app:id/brighter", desc: "Increase brightness" }));
      listTop += d(64);
    }
    if (s === "security") {
      children.push(
        textField("password", [l + d(16), listTop + d(8), r - d(16), listTop + d(56)], { id: "app:id/password", text: this.passwordDraft, hint: "Password", password: true, focused: this.focused === "password", focus: () => this.focus("password"), setText: (v) => (this.passwordDraft = v), submit: () => this.savePassword() }),
      );
      children.push(button("save", [l + d(16), listTop + d(64), r - d(16), listTop + d(112)], "SAVE", () => this.savePassword(), { id: "app:id/save", enabled: this.passwordDraft.length >= 4 }));
      listTop += d(120);
    }
    const entries = this.entries(s);
    const depth = this.stack.length - 1;
    children.push(list("list", [l, listTop, r, b], d(ROW_DP), entries.length, this.firsts[depth] ?? 0, (i, rb) => this.entryRow(entries[i]!, i, rb), (f) => (this.firsts[depth] = f), { id: "app:id/recycler_view" }));
    return panel(`page/${s}`, box, children, { id: "app:id/settings_page" });
  }

  private entryRow(e: Entry, i: number, rb: Box): Widget {
    const id = "app:id/" + (e.kind === "switch" || e.kind === "check" ? e.name : e.kind === "link" ? e.to : e.kind === "radio" ? `font_${i}` : e.kind === "dialog" ? "reset" : `row_${i}`);
    switch (e.kind) {
      case "switch":
        return switchView(e.name, rb, e.text, this.on(e.name), () => this.flip(e.name), { id });
      case "check":
        return checkbox(e.name, rb, e.text, this.on(e.name), () => this.flip(e.name), { id });
      case "link":
        return row(`link/${e.to}`, rb, e.text, () => this.open(e.to), { id, paint: { chevron: true } });
      case "dialog":
        return row("reset", rb, e.text, () => ((this.resetDialog = true), this.focus(undefined)), { id });
      case "radio":
        return { ...checkbox(`font/${e.size}`, rb, FONT_SIZES[e.size]!, this.font() === e.size, () => this.setFont(e.size), { id }), cls: "android.widget.RadioButton" };
      case "label":
        return label(`label/${i}`, rb, e.text, { id, paint: { fg: 0x616161 } });
    }
  }

  protected override dialog(): Widget | undefined {
    if (!this.resetDialog) return undefined;
    return alertDialog(this.host.screen, this.dp, "Reset all settings?", "Switches, brightness and font size.", { text: "CANCEL", press: () => this.cancelDialog() }, { text: "RESET", press: () => this.reset() });
  }

  protected override cancelDialog(): void {
    this.resetDialog = false;
  }

  protected back(): boolean {
    if (this.stack.length <= 1) return false;
    this.stack.pop();
    this.firsts.pop();
    this.focus(undefined);
    return true;
  }

  private open(to: ScreenName): void {
    this.stack.push(to);
    this.firsts.push(0);
    this.focus(undefined);
    if (to === "security") this.passwordDraft = "";
  }

  private flip(name: ToggleName): void {
    const p = this.provider ? PROVIDER_KEYS[name] : undefined;
    if (p) this.host.settings.put(p.ns, p.key, this.on(name) ? p.off : p.on);
    else this.toggles[name] = !this.on(name);
    this.changed(name, this.on(name) ? 1 : 0);
  }

  /** Android's Settings: the brightness slider set `system screen_brightness` to `v`. */
  private setLevel(v: number): void {
    if (v === this.level()) return;
    this.host.settings.put("system", "screen_brightness", String(v));
    this.changed("brightness", v);
  }

  private setBrightness(delta: number): void {
    const next = Math.min(100, Math.max(0, this.brightness + delta));
    if (next === this.brightness) return;
    this.brightness = next;
    this.changed("brightness", next);
  }

  private setFont(size: number): void {
    this.fontSize = size;
    if (this.provider) this.host.settings.put("system", "font_scale", FONT_SCALES[size] ?? FONT_SCALES[1]);
    this.changed("font_size", size);
  }

  private savePassword(): void {
    if (this.passwordDraft.length < 4) return;
    this.password = this.passwordDraft;
    this.passwordDraft = "";
    this.focus(undefined);
    this.changed("password_set", 1);
  }

  private reset(): void {
    this.resetDialog = false;
    this.resetAll();
    this.changed("reset", 1);
  }

  /** `name` (a switch's name, `brightness`, `font_size`, `password_set` or `reset`) changed to `value`. */
  private changed(name: string, value: number): void {
    this.host.rl(`json_extra: {"${name}": ${value}}`);
    // Only a change of what the goal names (or a reset of everything) can reach it: a goal that holds
    // from the start is not rewarded for an unrelated tap.
    if (this.solved || !this.goalReached(name)) return;
    this.solved = true;
    this.host.rl("reward: 1");
    this.host.rl("episode end");
  }

  private goalReached(changed: string): boolean {
    const g = this.goal;
    const named = changed === "reset" || changed === (g.kind === "toggle" ? g.name : g.kind === "font" ? "font_size" : g.kind === "password" ? "password_set" : g.kind);
    if (!named) return false;
    switch (g.kind) {
      case "toggle":
        return this.on(g.name) === g.on;
      case "brightness":
        return this.level() === g.value;
      case "font":
        return this.font() === g.size;
      case "password":
        return this.password !== "";
      case "none":
        return false;
    }
  }
}

export const createSimSettings: AppFactory = (host) => new SimSettings(host);
/** Android's Settings app (`com.android.settings`): Sim Settings' screens over the settings provider. */
export const createAndroidSettings: AppFactory = (host, launch) => new SimSettings(host, true, launch.activity);
