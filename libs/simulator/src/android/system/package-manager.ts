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
}

export const LAUNCHER_PACKAGE = "com.android.launcher3";
export const LAUNCHER_ACTIVITY = "com.android.launcher3.Launcher";

const SYSTEM_PACKAGES: { name: string; activities: string[]; label: string }[] = [
  { name: "android", activities: [], label: "Android System" },
  { name: LAUNCHER_PACKAGE, activities: [LAUNCHER_ACTIVITY], label: "Quickstep" },
  { name: "com.android.settings", activities: ["com.android.settings.Settings", "com.android.settings.Settings$WifiSettingsActivity", "com.android.settings.Settings$BluetoothSettingsActivity"], label: "Settings" },
  { name: "com.android.systemui", activities: [], label: "System UI" },
  { name: "com.android.shell", activities: [], label: "Shell" },
  { name: "com.android.providers.settings", activities: [], label: "Settings Storage" },
  { name: "com.android.inputmethod.latin", activities: [], label: "Android Keyboard (AOSP)" },
  { name: "com.android.deskclock", activities: ["com.android.deskclock.DeskClock"], label: "Clock" },
  // AndroidEnv's accessibility forwarder (a service and a receiver, no activity): libs/simulator/src/android/forwarder.
  { name: "com.google.androidenv.accessibilityforwarder", activities: [], label: "Accessibility Forwarder" },
];

/** An activity's `<intent-filter>`: an action (with CATEGORY_DEFAULT, so implicit starts reach it) and the activity. */
export interface IntentFilter {
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
const DECLARED_FILTERS = new Map<string, readonly IntentFilter[]>([
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
      this.packages.set(p.name, { name: p.name, versionCode: 29, activities: p.activities, app: "static", label: p.label, system: true, apkPath: `/system/app/${p.label.replace(/[^A-Za-z0-9]/g, "")}.apk`, uid: uid++, granted: new Set() });
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
    return { nextUid: this.nextUid, packages: [...this.packages.values()].map((p) => ({ ...p, activities: [...p.activities], granted: [...p.granted] })) };
  }

  restoreState(state: ReturnType<PackageManager["saveState"]>): void {
    this.packages.clear();
    for (const p of state.packages) this.packages.set(p.name, { ...p, activities: [...p.activities], granted: new Set(p.granted) });
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
