/** Installed packages: the system packages of a fresh emulator plus whatever `pm install` adds. */
import { parseSimApk, SimApkError, type SimApkManifest } from "../../apk/sim-apk.ts";
import type { SimFileSystem } from "./file-system.ts";

export interface InstalledPackage {
  name: string;
  versionCode: number;
  /** Fully qualified activity class names; the first is the launcher activity. */
  activities: string[];
  /** App implementation id (src/apps/registry.ts); `static` for system packages without behaviour. */
  app: string;
  label: string;
  system: boolean;
  apkPath: string;
  uid: number;
  granted: Set<string>;
  /** The intents its activities take (`am start -a ACTION`), as its manifest's intent filters; absent: none but the launcher's. */
  intentFilters?: IntentFilter[];
}

/** One activity's intent filter: the actions (and categories) it takes. */
export interface IntentFilter {
  /** Fully qualified activity class name. */
  activity: string;
  actions: string[];
  categories: string[];
}

export const LAUNCHER_PACKAGE = "com.android.launcher3";
export const LAUNCHER_ACTIVITY = "com.android.launcher3.Launcher";

export const SETTINGS_PACKAGE = "com.android.settings";
const S = (cls: string): string => `${SETTINGS_PACKAGE}.${cls}`;
/**
 * Android's Settings: its main activity and the deep links intents reach (the screens of
 * src/apps/sim-settings.ts SETTINGS_ACTIVITIES, which must name the same classes).
 */
const SETTINGS_FILTERS: IntentFilter[] = [
  { activity: S("Settings"), actions: ["android.intent.action.MAIN"], categories: ["android.intent.category.LAUNCHER", "android.intent.category.DEFAULT"] },
  { activity: S("Settings"), actions: ["android.settings.SETTINGS"], categories: ["android.intent.category.DEFAULT"] },
  { activity: S("Settings$NetworkDashboardActivity"), actions: ["android.settings.WIRELESS_SETTINGS", "android.settings.AIRPLANE_MODE_SETTINGS", "android.settings.DATA_ROAMING_SETTINGS"], categories: ["android.intent.category.DEFAULT"] },
  { activity: S("Settings$WifiSettingsActivity"), actions: ["android.settings.WIFI_SETTINGS", "android.settings.panel.action.INTERNET_CONNECTIVITY"], categories: ["android.intent.category.DEFAULT"] },
  { activity: S("Settings$ConnectedDeviceDashboardActivity"), actions: ["android.settings.BLUETOOTH_SETTINGS", "android.settings.NFC_SETTINGS"], categories: ["android.intent.category.DEFAULT"] },
  { activity: S("Settings$DisplaySettingsActivity"), actions: ["android.settings.DISPLAY_SETTINGS"], categories: ["android.intent.category.DEFAULT"] },
  { activity: S("Settings$SecurityDashboardActivity"), actions: ["android.settings.SECURITY_SETTINGS"], categories: ["android.intent.category.DEFAULT"] },
  { activity: S("Settings$MyDeviceInfoActivity"), actions: ["android.settings.DEVICE_INFO_SETTINGS"], categories: ["android.intent.category.DEFAULT"] },
];

const SYSTEM_PACKAGES: { name: string; activities: string[]; label: string; app?: string; filters?: IntentFilter[] }[] = [
  { name: "android", activities: [], label: "Android System" },
  { name: LAUNCHER_PACKAGE, activities: [LAUNCHER_ACTIVITY], label: "Quickstep" },
  { name: SETTINGS_PACKAGE, activities: [...new Set(SETTINGS_FILTERS.map((f) => f.activity))], label: "Settings", app: "android-settings", filters: SETTINGS_FILTERS },
  { name: "com.android.systemui", activities: [], label: "System UI" },
  { name: "com.android.shell", activities: [], label: "Shell" },
  { name: "com.android.providers.settings", activities: [], label: "Settings Storage" },
  { name: "com.android.inputmethod.latin", activities: [], label: "Android Keyboard (AOSP)" },
  { name: "com.android.deskclock", activities: ["com.android.deskclock.DeskClock"], label: "Clock" },
  // AndroidEnv's accessibility forwarder (a service and a receiver, no activity): libs/simulator/src/android/forwarder.
  { name: "com.google.androidenv.accessibilityforwarder", activities: [], label: "Accessibility Forwarder" },
];

/** An activity's `<intent-filter>`: an action (with CATEGORY_DEFAULT, so implicit starts reach it) and the activity. */
export interface DeclaredIntentFilter {
  action: string;
  /** Categories besides DEFAULT the filter lists. */
  categories?: readonly string[];
  /** Fully qualified activity class; the filter exists only while the package has that activity. */
  activity: string;
}

/**
 * The filters packages' manifests declare, by package name: the system image's apps, and whatever
 * package of that name is installed in their place (AOSP Settings' and DeskClock's own manifests).
 */
const DECLARED_FILTERS = new Map<string, readonly DeclaredIntentFilter[]>([
  [
    "com.android.settings",
    [
      { action: "android.settings.SETTINGS", activity: "com.android.settings.Settings" },
      { action: "android.settings.WIFI_SETTINGS", activity: "com.android.settings.Settings$WifiSettingsActivity" },
      { action: "android.settings.BLUETOOTH_SETTINGS", activity: "com.android.settings.Settings$BluetoothSettingsActivity" },
    ],
  ],
  ["com.android.deskclock", [{ action: "android.intent.action.SHOW_ALARMS", activity: "com.android.deskclock.DeskClock" }]],
]);

const CATEGORY_DEFAULT = "android.intent.category.DEFAULT";

export type InstallResult = { ok: true; pkg: InstalledPackage } | { ok: false; code: string };

export class PackageManager {
  private readonly packages = new Map<string, InstalledPackage>();
  private nextUid = 10100;

  constructor(private readonly fs: SimFileSystem) {
    let uid = 1000;
    for (const p of SYSTEM_PACKAGES) {
      this.packages.set(p.name, { name: p.name, versionCode: 29, activities: p.activities, app: p.app ?? "static", label: p.label, system: true, apkPath: `/system/app/${p.label.replace(/[^A-Za-z0-9]/g, "")}.apk`, uid: uid++, granted: new Set(), intentFilters: p.filters });
      this.fs.mkdirs(`/data/data/${p.name}`);
    }
  }

  /**
   * The activity an implicit intent starts (`am start -a ACTION [-c CAT] [-p PKG]`): the first
   * package, by name, with a filter for the action whose categories cover the intent's; undefined
   * when none has one (a chooser among several is not modelled).
   */
  resolveActivity(intent: { action?: string; categories: readonly string[]; packageName?: string }): { packageName: string; className: string } | undefined {
    if (!intent.action) return undefined;
    for (const pkg of this.list()) {
      if (intent.packageName !== undefined && pkg.name !== intent.packageName) continue;
      for (const f of pkg.intentFilters ?? []) {
        if (!f.actions.includes(intent.action) || !pkg.activities.includes(f.activity)) continue;
        if (intent.categories.every((c) => c === CATEGORY_DEFAULT || f.categories.includes(c))) return { packageName: pkg.name, className: f.activity };
      }
      for (const f of DECLARED_FILTERS.get(pkg.name) ?? []) {
        if (f.action !== intent.action || !pkg.activities.includes(f.activity)) continue;
        const cats = new Set([CATEGORY_DEFAULT, ...(f.categories ?? [])]);
        if (intent.categories.every((c) => cats.has(c))) return { packageName: pkg.name, className: f.activity };
      }
    }
    return undefined;
  }

  get(name: string): InstalledPackage | undefined {
    return this.packages.get(name);
  }

  /**
   * The activities whose intent filters take `action` (and every category given), as PackageManager's
   * queryIntentActivities lists them: system packages first, then by package name. An installed app's launcher
   * activity takes `android.intent.action.MAIN` with category LAUNCHER (its APK declares no other filter).
   */
  queryIntentActivities(action: string, categories: readonly string[] = []): { packageName: string; className: string }[] {
    const out: { packageName: string; className: string; system: boolean }[] = [];
    for (const p of this.list()) {
      const filters = p.intentFilters ?? (p.activities[0] && p.name !== LAUNCHER_PACKAGE ? [{ activity: p.activities[0], actions: ["android.intent.action.MAIN"], categories: ["android.intent.category.LAUNCHER"] }] : []);
      for (const f of filters) {
        if (!f.actions.includes(action) || !categories.every((c) => f.categories.includes(c))) continue;
        if (!out.some((o) => o.packageName === p.name && o.className === f.activity)) out.push({ packageName: p.name, className: f.activity, system: p.system });
      }
    }
    return out.sort((a, b) => Number(b.system) - Number(a.system)).map(({ packageName, className }) => ({ packageName, className }));
  }

  /** What `pm clear` removes besides stopping the app: its data folder `/data/data/<package>` (databases, files, prefs). */
  clearData(name: string): boolean {
    if (!this.packages.has(name)) return false;
    this.fs.remove(`/data/data/${name}`, true);
    this.fs.mkdirs(`/data/data/${name}`); // emptied, not gone: the app still owns its data folder
    return true;
  }

  list(): InstalledPackage[] {
    return [...this.packages.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Installs simulated APK bytes. `allowDowngrade` is pm's `-d`. */
  install(bytes: Uint8Array, opts: { allowDowngrade?: boolean; grantAll?: boolean } = {}): InstallResult {
    let manifest: SimApkManifest;
    try {
      manifest = parseSimApk(bytes);
    } catch (e) {
      if (e instanceof SimApkError) return { ok: false, code: "INSTALL_FAILED_INVALID_APK" };
      throw e;
    }
    const old = this.packages.get(manifest.packageName);
    if (old?.system) return { ok: false, code: "INSTALL_FAILED_UPDATE_INCOMPATIBLE" };
    if (old && manifest.versionCode < old.versionCode && !opts.allowDowngrade) return { ok: false, code: "INSTALL_FAILED_VERSION_DOWNGRADE" };
    const apkPath = `/data/app/${manifest.packageName}-1/base.apk`;
    this.fs.write(apkPath, bytes, 0o644, Math.floor(Date.now() / 1000));
    const pkg: InstalledPackage = {
      name: manifest.packageName,
      versionCode: manifest.versionCode,
      activities: manifest.activities,
      app: manifest.app,
      label: manifest.label,
      system: false,
      apkPath,
      uid: old?.uid ?? this.nextUid++,
      granted: old?.granted ?? new Set(),
    };
    this.packages.set(pkg.name, pkg);
    this.fs.mkdirs(`/data/data/${pkg.name}`); // the app's private data folder, as installd makes it
    return { ok: true, pkg };
  }

  saveState(): { nextUid: number; packages: (Omit<InstalledPackage, "granted"> & { granted: string[] })[] } {
    return { nextUid: this.nextUid, packages: [...this.packages.values()].map((p) => ({ ...p, activities: [...p.activities], granted: [...p.granted], intentFilters: p.intentFilters?.map((f) => ({ ...f, actions: [...f.actions], categories: [...f.categories] })) })) };
  }

  restoreState(state: ReturnType<PackageManager["saveState"]>): void {
    this.packages.clear();
    for (const p of state.packages) {
      const pkg: InstalledPackage = { ...p, activities: [...p.activities], granted: new Set(p.granted) };
      // A snapshot from before Settings was an app of its own keeps the system package as this device has it.
      const sys = p.system ? SYSTEM_PACKAGES.find((x) => x.name === p.name) : undefined;
      if (sys?.filters && !p.intentFilters) Object.assign(pkg, { activities: [...sys.activities], app: sys.app ?? pkg.app, intentFilters: sys.filters });
      this.packages.set(p.name, pkg);
    }
    this.nextUid = state.nextUid;
  }

  uninstall(name: string): boolean {
    const p = this.packages.get(name);
    if (!p || p.system) return false;
    this.packages.delete(name);
    this.fs.remove(`/data/app/${name}-1`, true);
    this.fs.remove(`/data/data/${name}`, true);
    return true;
  }
}
