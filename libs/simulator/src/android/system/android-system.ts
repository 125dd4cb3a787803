/**
 * All state of one simulated Android device, shared by the shell commands: properties, settings,
 * files, packages, tasks and app processes, input, logs, display and faults. One per SimAndroid.
 */
import { SystemProperties } from "./props.ts";
import { SimFileSystem } from "./file-system.ts";
import { FaultInjector } from "./faults.ts";
import { LogBuffer } from "./log-buffer.ts";
import { SettingsStore, type SettingsNamespace } from "./settings-store.ts";
import { PackageManager } from "./package-manager.ts";
import { ActivityManager, SYSTEM_SERVER_PID, type SavedActivities } from "./activity-manager.ts";
import { normalizePath, type SavedFsNode } from "./file-system.ts";
import type { LogEntry } from "./log-buffer.ts";
import { InputDispatcher } from "./input-dispatcher.ts";
import { Accessibility } from "./accessibility.ts";
import { hashString } from "./rng.ts";
import { scaledMotion } from "./latency.ts";
import { SettleLog } from "./settle-log.ts";
import { Canvas } from "../../graphics/canvas.ts";
import { renderLauncher } from "./launcher.ts";
import { rotateFrame } from "../../graphics/orientation.ts";
import { AccessibilityForwarder, type BroadcastIntent, type ForwarderFlags } from "../forwarder/forwarder.ts";
import { silentLogger, type Logger } from "@farm/log";
import type { AppCatalog } from "../app-contract.ts";

export interface ScreenSize {
  width: number;
  height: number;
}

/** Properties that name this device rather than its state; a snapshot load keeps them. */
const IDENTITY_PROPS = ["ro.serialno", "ro.boot.serialno"] as const;

export interface AndroidSystemOptions {
  serial: string;
  seed: number;
  screen: ScreenSize;
  /** Wall clock in ms; injectable for tests. */
  now: () => number;
  /** Where the device's system services log what the host should know (the accessibility forwarder's connection). */
  logger?: Logger;
  /** The app implementations (apps/registry.ts, handed down by the device). */
  apps: AppCatalog;
}

/**
 * Everything a device snapshot restores: properties, settings, files, packages, the task stack with
 * every app process (its own state and random generator), the log ring, the display overrides and
 * thereby the orientation (a setting). Not in it: fault injection, which belongs to the test harness.
 */
export interface SavedSystem {
  /** The natural screen size; a snapshot loads only on a device of the same size (as an emulator refuses a snapshot of another hardware config). */
  screen: ScreenSize;
  props: [string, string][];
  settings: ReturnType<SettingsStore["saveState"]>;
  files: SavedFsNode[];
  packages: ReturnType<PackageManager["saveState"]>;
  activities: SavedActivities;
  log: LogEntry[];
  display: { override: ScreenSize | undefined; overrideDensity: number | undefined };
  /** The accessibility forwarder app's flags (its process memory); absent in snapshots from before it. */
  forwarder?: ForwarderFlags;
}

export interface DisplayState {
  readonly physical: ScreenSize;
  override: ScreenSize | undefined;
  readonly physicalDensity: number;
  overrideDensity: number | undefined;
}

export class AndroidSystem {
  readonly serial: string;
  readonly seed: number;
  readonly screen: ScreenSize;
  /** The device's wall clock in ms (the host's, moved by `date` as root). */
  readonly now: () => number;
  private readonly hostNow: () => number;
  readonly props: SystemProperties;
  readonly fs: SimFileSystem;
  readonly faults: FaultInjector;
  readonly log: LogBuffer;
  readonly settings: SettingsStore;
  readonly packages: PackageManager;
  readonly activities: ActivityManager;
  readonly input: InputDispatcher;
  /** The screen as accessibility reports it (uiautomator, the accessibility forwarder). */
  readonly accessibility: Accessibility;
  /** AndroidEnv's accessibility forwarder app, preinstalled. */
  readonly forwarder: AccessibilityForwarder;
  readonly display: DisplayState;
  /** How far the device's clock is set from the host's (`date MMDDhhmm…` as root); 0 on a fresh device. */
  private clockOffsetMs = 0;
  /** Benchmark-only ground truth: when each input's effect on the screen was complete (settle-log.ts). */
  readonly settle: SettleLog;
  /** Counts snapshot loads, so input sources holding their own touch state (gRPC) know to forget it. */
  private restores = 0;
  /** Aborted by close(): ends every following logcat and sleep on this device. */
  private readonly lifetime = new AbortController();

  constructor(opts: AndroidSystemOptions) {
    this.serial = opts.serial;
    this.seed = opts.seed;
    this.screen = opts.screen;
    const hostNow = opts.now;
    this.hostNow = hostNow;
    // Everything on the device (logcat, date, file times, apps) reads this clock, so setting the time moves them all.
    this.now = () => hostNow() + this.clockOffsetMs;
    this.props = new SystemProperties(opts.serial, opts.screen);
    this.fs = new SimFileSystem(() => Math.floor(this.now() / 1000));
    this.faults = new FaultInjector(opts.seed, () => this.activities.crashForeground());
    this.log = new LogBuffer(this.now);
    this.settings = new SettingsStore(((hashString(opts.serial) ^ opts.seed) >>> 0).toString(16).padStart(16, "0").slice(-16));
    this.packages = new PackageManager(this.fs);
    this.settle = new SettleLog(this.now);
    this.activities = new ActivityManager(this.packages, this.log, this.now, this.screen, opts.seed, opts.apps, {
      motionTimings: () => scaledMotion(this.faults.profileName, (k) => this.settings.get("global", k)),
      contentChanged: (scrolled) => this.accessibility.contentChanged(scrolled),
      busyUntil: (atMs) => this.settle.busyUntil(atMs),
      fs: this.fs,
      // An app's provider write is heard by the system as `settings put`'s is.
      settings: { get: (ns, key) => this.settings.get(ns, key), put: (ns, key, value) => (this.settings.put(ns, key, value), this.onSettingChanged(ns, key)) },
    });
    this.accessibility = new Accessibility(this.activities, this.packages, this.screen, () => this.rotation(), this.now);
    this.input = new InputDispatcher(this.activities, this.packages, this.faults, this.screen, () => this.rotation(), this.accessibility, this.settle);
    this.display = { physical: { ...opts.screen }, override: undefined, physicalDensity: 160, overrideDensity: undefined };
    this.forwarder = new AccessibilityForwarder(this.accessibility, this.settings, this.log, opts.logger ?? silentLogger);
    this.log.append({ pid: SYSTEM_SERVER_PID, tid: SYSTEM_SERVER_PID, priority: "I", tag: "SystemServer", message: "Entered the Android system server!", buffer: "system" });
    this.log.append({ pid: SYSTEM_SERVER_PID, tid: SYSTEM_SERVER_PID + 27, priority: "I", tag: "ActivityManager", message: "System now ready", buffer: "system" });
  }

  /** Sets the device's wall clock (what `date MMDDhhmm…` does as root); logcat, `date` and apps follow. */
  setClock(epochMs: number): void {
    this.clockOffsetMs = epochMs - this.hostNow();
  }

  /** The device's time zone (`persist.sys.timezone`, set by `service call alarm 3 s16 TZ`); UTC when unset. */
  timeZone(): string {
    return this.props.get("persist.sys.timezone") || "UTC";
  }

  /**
   * Whether adbd's shells run as root: after `adb root` on a debuggable build (`service.adb.root` 1,
   * as adbd decides when it starts), or always on a build without `ro.secure`.
   */
  shellIsRoot(): boolean {
    if (this.props.get("ro.secure") === "0") return true;
    return this.props.get("ro.debuggable") === "1" && this.props.get("service.adb.root") === "1";
  }

  /**
   * Why the shell may not create or change `path`, or undefined when it may: the read-only system
   * partitions for everyone (no remount here), apps' private data (`/data/data`, `/data/user`) and
   * system state (`/data/system`, `/data/misc`) unless the shell is root.
   */
  writeDenied(path: string): string | undefined {
    const p = normalizePath(path.startsWith("/") ? path : `/${path}`);
    const under = (dir: string): boolean => p === dir || p.startsWith(dir + "/");
    if (["/system", "/vendor", "/product", "/apex", "/proc", "/sys"].some(under) || p === "/") return "Read-only file system";
    if (!this.shellIsRoot() && ["/data/data", "/data/user", "/data/user_de", "/data/system", "/data/misc"].some(under)) return "Permission denied";
    return undefined;
  }

  get closedSignal(): AbortSignal {
    return this.lifetime.signal;
  }

  /** Display rotation 0..3 (user_rotation while accelerometer_rotation is 0). */
  rotation(): 0 | 1 | 2 | 3 {
    return this.settings.rotation();
  }

  /** Delivers a broadcast to the receivers it names or reaches; returns how many got it. */
  sendBroadcast(intent: BroadcastIntent): number {
    // Since Android 8 a manifest receiver gets only explicit broadcasts: the forwarder's needs its component.
    return intent.component && this.forwarder.receive(intent) ? 1 : 0;
  }

  onSettingChanged(ns: SettingsNamespace, key: string): void {
    if (ns === "system" && (key === "user_rotation" || key === "accelerometer_rotation" || key === "*")) {
      this.log.append({ pid: SYSTEM_SERVER_PID, tid: SYSTEM_SERVER_PID + 31, priority: "I", tag: "WindowManager", message: `Rotation changed to ${this.rotation()}`, buffer: "system" });
    }
    if (ns === "secure" && (key === "enabled_accessibility_services" || key === "*")) this.forwarder.apply();
    this.accessibility.checkChanges();
  }

  saveState(): SavedSystem {
    return {
      screen: { ...this.screen },
      props: this.props.saveState(),
      settings: this.settings.saveState(),
      files: this.fs.saveState(),
      packages: this.packages.saveState(),
      activities: this.activities.saveState(),
      log: this.log.saveState(),
      display: { override: this.display.override && { ...this.display.override }, overrideDensity: this.display.overrideDensity },
      forwarder: this.forwarder.saveState(),
    };
  }

  /** Puts the device back to a saved state; the log comes last so nothing the restore does shows in it. */
  restoreState(s: SavedSystem): void {
    if (s.screen.width !== this.screen.width || s.screen.height !== this.screen.height) {
      throw new Error(`snapshot is of a ${s.screen.width}x${s.screen.height} device, this one is ${this.screen.width}x${this.screen.height}`);
    }
    // The device keeps its own identity (its serial follows its port), as the emulator's does.
    const identity = IDENTITY_PROPS.map((k) => [k, this.props.get(k)] as const);
    this.props.restoreState(s.props);
    for (const [k, v] of identity) if (v !== undefined) this.props.set(k, v);
    this.settings.restoreState(s.settings);
    this.fs.restoreState(s.files);
    this.packages.restoreState(s.packages);
    this.input.reset();
    this.settle.clear();
    this.activities.restoreState(s.activities);
    this.display.override = s.display.override && { ...s.display.override };
    this.display.overrideDensity = s.display.overrideDensity;
    this.forwarder.restoreState(s.forwarder);
    this.log.restoreState(s.log);
    this.restores++;
  }

  /** How many snapshot loads this device has had. */
  get restoreCount(): number {
    return this.restores;
  }

  /** Renders the current screen (the app in front, or the launcher). Portrait, whatever the rotation. */
  render(into?: Canvas): Canvas {
    let c: Canvas;
    if (into && into.width === this.screen.width && into.height === this.screen.height) {
      c = into;
      c.begin(); // a reused surface starts as a fresh one does
    } else c = new Canvas(this.screen.width, this.screen.height);
    const proc = this.activities.foregroundProcess();
    if (!proc) renderLauncher(c, this.packages);
    else proc.guard(() => proc.app.render(c));
    return c;
  }

  /**
   * The screen as the display shows it: the rendered frame turned by the rotation (screencap,
   * framebuffer, gRPC). With `into`, an unrotated frame is drawn into that reused surface and its
   * bytes are returned as they are (valid until the next frame drawn into it): fresh frame-sized
   * memory costs more than the drawing on a busy machine. `version` and `rotation` together identify
   * the pixels: a frame with both equal to an earlier one's has the same bytes.
   */
  displayFrame(into?: Canvas): { width: number; height: number; rgba: Uint8Array; version: number; rotation: number } {
    const c = this.render(into);
    const rotation = this.rotation();
    return Object.assign(rotateFrame(c.rgba, c.width, c.height, rotation), { version: c.version, rotation });
  }

  close(): void {
    if (this.lifetime.signal.aborted) return;
    this.lifetime.abort();
    this.forwarder.close();
    this.activities.killAll();
  }
}
