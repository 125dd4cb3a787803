/**
 * An in-memory `Device` for fast unit tests of code above the driver (the episode runner, the worker's
 * processor): no adb server, no simulator, no sockets. It passes the same conformance suite as the driver over a
 * simulated emulator (test/device-conformance.test.ts), so a test that uses it relies only on behaviour the
 * real driver has. Apps are simulated APKs (`SIMAPK 1` + JSON) installed from the APK folders; what an app does
 * when it starts or is touched is up to the test (`FakeApp`), e.g. log `reward: 1` on every touch.
 *
 *   const dev = new FakeDevice({ apps: { "com.example.game": { onTouch: (app) => app.log("reward: 1") } } });
 *   dev.hang(true);    // every call answers `timeout` at its deadline, like a hung emulator
 *   dev.drop();        // the device is gone: `adb_error`, state `gone`, logcat streams fail
 */
import fs from "node:fs";
import { findApk, type AdbCommand, type AdbRequest, type AppScreen, type ApkLocation } from "@farm/task";
import { fail, ok, stepResult } from "./result.ts";
import type { ActionChannel, AppScreenMatch, Device, DeviceState, LogcatOptions, LogcatRecord, LogcatStream, Screenshot, ShellResult, StepResult } from "./types.ts";
import { expandActivity } from "./validate.ts";
import { orTimeout, sleep } from "@farm/time";

/** What an app can do from its hooks. */
export interface FakeAppContext {
  readonly packageName: string;
  /** The `start_activity` extra args of the current launch. */
  readonly extraArgs: readonly string[];
  /** Writes a logcat line (tag `AndroidRLTask`, priority I, unless given). */
  log(message: string, tag?: string): void;
}

export interface FakeApp {
  onStart?(app: FakeAppContext): void;
  /** A touch down (or tap) at pixel (x, y) while the app is in front. */
  onTouch?(app: FakeAppContext, x: number, y: number): void;
}

export interface FakeDeviceOptions {
  serial?: string;
  screen?: { width: number; height: number };
  /** Behaviour of apps by package name (an installed package without one does nothing). */
  apps?: Record<string, FakeApp>;
  /** The deadline of a call given none. @default 10000 */
  defaultTimeoutMs?: number;
}

const LAUNCHER = "com.android.launcher3/com.android.launcher3.Launcher";
const SYSTEM_PACKAGES = ["android", "com.android.launcher3", "com.android.settings", "com.android.systemui"];
const APP_PID = 4000;

interface Installed {
  activities: string[];
}

export class FakeDevice implements Device {
  readonly serial: string;
  private readonly screen: { width: number; height: number };
  private readonly apps: Record<string, FakeApp>;
  private readonly defaultTimeoutMs: number;
  private readonly installed = new Map<string, Installed>();
  private readonly streams = new Set<FakeLogcat>();
  private readonly log: LogcatRecord[] = [];
  private foreground = LAUNCHER;
  private extraArgs: readonly string[] = [];
  private hung = false;
  private gone = false;
  private readonly unhang = new Set<() => void>();

  constructor(opts: FakeDeviceOptions = {}) {
    this.serial = opts.serial ?? "fake-5554";
    this.screen = opts.screen ?? { width: 360, height: 640 };
    this.apps = opts.apps ?? {};
    this.defaultTimeoutMs = opts.defaultTimeoutMs ?? 10_000;
  }

  // ---- faults ----

  /** true: every call answers `timeout` at its deadline (a hung emulator); false: answers again. */
  hang(on: boolean): void {
    this.hung = on;
    if (!on) for (const f of [...this.unhang]) f();
  }

  /** The device leaves: calls answer `adb_error`, `state()` says `gone`, open logcat streams fail. */
  drop(): void {
    this.gone = true;
    for (const s of [...this.streams]) s.fail(`device '${this.serial}' not found`);
  }

  /** Back after `drop()` (the app state survives, like a reconnected emulator). */
  reconnect(): void {
    this.gone = false;
  }

  /** Writes a logcat line as an app would. */
  writeLog(tag: string, message: string, priority = "I"): void {
    const rec: LogcatRecord = { timestampSec: Date.now() / 1000, pid: APP_PID, tid: APP_PID, priority, tag, message };
    this.log.push(rec);
    if (this.log.length > 10_000) this.log.shift();
    for (const s of this.streams) s.deliver(rec);
  }

  // ---- Device ----

  async execute(request: AdbRequest, opts: { timeoutMs?: number; apkDirs?: string[] } = {}): Promise<StepResult> {
    const timeoutMs = opts.timeoutMs ?? (request.timeoutSec > 0 ? request.timeoutSec * 1000 : this.defaultTimeoutMs);
    return this.answer(timeoutMs, () => this.run(request.cmd, opts.apkDirs ?? []));
  }

  async shell(commandLine: string, opts: { timeoutMs?: number } = {}): Promise<ShellResult> {
    const r = await this.answer(opts.timeoutMs, () => this.runShell(commandLine));
    return { status: r.status, message: r.message, stdout: r.output, durationMs: r.durationMs };
  }

  async waitBootComplete(timeoutMs: number): Promise<StepResult> {
    if (this.gone) {
      await sleep(timeoutMs);
      return fail("timeout", `device '${this.serial}' did not finish booting within ${timeoutMs} ms`);
    }
    return this.answer(timeoutMs, () => ok());
  }

  async openActionChannel(): Promise<ActionChannel> {
    return new FakeActionChannel(this);
  }

  async openLogcat(opts: LogcatOptions): Promise<LogcatStream> {
    if (opts.clear) this.log.length = 0;
    const s = new FakeLogcat(opts.filters, () => this.streams.delete(s));
    if (this.gone) s.fail(`device '${this.serial}' not found`);
    else this.streams.add(s);
    return s;
  }

  async matchAppScreen(screen: AppScreen, opts: { timeoutMs?: number } = {}): Promise<AppScreenMatch> {
    if (screen.activity === "") return "EMPTY_EXPECTED_ACTIVITY";
    const r = await this.answer(opts.timeoutMs, () => ok());
    if (r.status !== "ok") return "FAILED_ACTIVITY_EXTRACTION";
    if (this.foreground !== expandActivity(screen.activity)) return "UNEXPECTED_ACTIVITY";
    // The fake has no view tree: a screen that names one never matches.
    return screen.viewHierarchyPath.length === 0 ? "SUCCESS" : "UNEXPECTED_VIEW_HIERARCHY";
  }

  async installedPackages(opts: { timeoutMs?: number } = {}): Promise<string[] | StepResult> {
    const r = await this.answer(opts.timeoutMs, () => ok());
    return r.status === "ok" ? [...SYSTEM_PACKAGES, ...this.installed.keys()].sort() : r;
  }

  async screenshot(opts: { timeoutMs?: number } = {}): Promise<Screenshot | StepResult> {
    const r = await this.answer(opts.timeoutMs, () => ok());
    if (r.status !== "ok") return r;
    const { width, height } = this.screen;
    const rgba = new Uint8Array(width * height * 4);
    const shade = this.foreground === LAUNCHER ? 40 : 200;
    for (let i = 0; i < rgba.length; i += 4) rgba.set([shade, shade, shade, 255], i);
    return { width, height, rgba };
  }

  async screenshotPng(): Promise<Uint8Array | StepResult> {
    return fail("unknown_command", "the fake device encodes no PNG; use screenshot()");
  }

  async orientation(opts: { timeoutMs?: number } = {}): Promise<0 | 1 | 2 | 3 | StepResult> {
    const r = await this.answer(opts.timeoutMs, () => ok());
    return r.status === "ok" ? 0 : r;
  }

  async screenSize(opts: { timeoutMs?: number } = {}): Promise<{ width: number; height: number } | StepResult> {
    const r = await this.answer(opts.timeoutMs, () => ok());
    return r.status === "ok" ? { ...this.screen } : r;
  }

  async state(): Promise<DeviceState | StepResult> {
    return this.gone ? "gone" : "device";
  }

  async probe(opts: { timeoutMs?: number } = {}): Promise<StepResult> {
    return this.answer(opts.timeoutMs, () => ok("farm-probe\n"));
  }

  // ---- internals ----

  /** Answers now, or — hung — `timeout` at the deadline (sooner if the hang ends first: then the real answer). */
  async answer(timeoutMs: number | undefined, work: () => StepResult): Promise<StepResult> {
    const ms = timeoutMs ?? this.defaultTimeoutMs;
    if (this.gone) return fail("adb_error", `device '${this.serial}' not found`);
    if (this.hung) {
      let wake!: () => void;
      const woken = new Promise<boolean>((resolve) => {
        wake = () => resolve(true);
        this.unhang.add(wake);
      });
      const released = await orTimeout(woken, ms, () => false);
      this.unhang.delete(wake);
      if (!released) return stepResult("timeout", `device '${this.serial}' did not answer within ${ms} ms`, "", ms);
    }
    await new Promise<void>((r) => setImmediate(r)); // an answer is never synchronous
    return work();
  }

  private run(cmd: AdbCommand, apkDirs: readonly string[]): StepResult {
    switch (cmd.command) {
      case "install_apk":
        return this.install(cmd.location, apkDirs);
      case "uninstall_package":
        if (this.packageOf(this.foreground) === cmd.packageName) this.foreground = LAUNCHER;
        this.installed.delete(cmd.packageName);
        return ok();
      case "start_activity":
        return this.start(cmd.fullActivity, cmd.extraArgs);
      case "force_stop":
        if (this.packageOf(this.foreground) === cmd.packageName) this.foreground = LAUNCHER;
        return ok();
      case "press_button":
        if (cmd.button !== "ENTER") this.foreground = LAUNCHER;
        return ok();
      case "tap":
        this.touch(cmd.x, cmd.y);
        return ok();
      case "get_current_activity":
        return ok(this.foreground, { kind: "current_activity", fullActivity: this.foreground });
      case "get_orientation":
        return ok("0", { kind: "orientation", orientation: 0 });
      default:
        return fail("unknown_command", `the fake device does not do ${cmd.command}`);
    }
  }

  private runShell(line: string): StepResult {
    const words = line.trim().split(/\s+/);
    if (words[0] === "echo") return ok(`${words.slice(1).join(" ")}\n`);
    if (words[0] === "log") {
      const t = words.indexOf("-t");
      const tag = t >= 0 ? (words[t + 1] ?? "log") : "log";
      const msgAt = t >= 0 ? t + 2 : 1;
      this.writeLog(tag, words.slice(msgAt).join(" "));
      return ok();
    }
    return fail("internal_error", `/system/bin/sh: ${words[0] ?? ""}: not found on the fake device`);
  }

  private install(location: ApkLocation, apkDirs: readonly string[]): StepResult {
    let bytes: Uint8Array;
    if (location.kind === "blob") bytes = location.contents;
    else {
      const found = findApk(location, apkDirs);
      if (!found) return fail("internal_error", `install_apk: APK not found on this host at ${location.path}`);
      bytes = fs.readFileSync(found);
    }
    const text = Buffer.from(bytes).toString("utf8");
    const nl = text.indexOf("\n");
    if (text.slice(0, nl) !== "SIMAPK 1") return fail("internal_error", "install_apk: Failure [INSTALL_PARSE_FAILED_NOT_APK]");
    const manifest = JSON.parse(text.slice(nl + 1)) as { package: string; activities?: string[] };
    this.installed.set(manifest.package, { activities: (manifest.activities ?? []).map((a) => expandActivity(a.includes("/") ? a : `${manifest.package}/${a}`)) });
    return ok("Success\n");
  }

  private start(fullActivity: string, extraArgs: readonly string[]): StepResult {
    const full = expandActivity(fullActivity);
    const pkg = this.packageOf(full);
    if (!this.installed.get(pkg)?.activities.includes(full)) return fail("internal_error", `Error: Activity class {${full}} does not exist.`);
    this.foreground = full;
    this.extraArgs = [...extraArgs];
    this.apps[pkg]?.onStart?.(this.appContext(pkg));
    return ok(`Starting: Intent { cmp=${full} }\n`);
  }

  /** A touch reaches the app in front. */
  touch(x: number, y: number): void {
    const pkg = this.packageOf(this.foreground);
    if (this.foreground !== LAUNCHER && Object.hasOwn(this.apps, pkg)) this.apps[pkg]!.onTouch?.(this.appContext(pkg), x, y);
  }

  /** HOME / BACK leave the app. */
  key(keycode: string): void {
    if (keycode === "KEYCODE_HOME" || keycode === "KEYCODE_BACK" || keycode === "3" || keycode === "4") this.foreground = LAUNCHER;
  }

  private packageOf(activity: string): string {
    return activity.slice(0, Math.max(0, activity.indexOf("/")));
  }

  private appContext(packageName: string): FakeAppContext {
    return { packageName, extraArgs: this.extraArgs, log: (message, tag = "AndroidRLTask") => this.writeLog(tag, message) };
  }
}

class FakeActionChannel implements ActionChannel {
  private down = false;
  constructor(private readonly dev: FakeDevice) {}
  touchDown(x: number, y: number): Promise<StepResult> {
    return this.dev.answer(undefined, () => ((this.down = true), this.dev.touch(x, y), ok()));
  }
  touchMove(_x: number, _y: number): Promise<StepResult> {
    return this.dev.answer(undefined, () => ok());
  }
  touchUp(_x: number, _y: number): Promise<StepResult> {
    return this.dev.answer(undefined, () => ((this.down = false), ok()));
  }
  tap(x: number, y: number): Promise<StepResult> {
    return this.dev.answer(undefined, () => (this.dev.touch(x, y), ok()));
  }
  swipe(x1: number, y1: number): Promise<StepResult> {
    return this.dev.answer(undefined, () => (this.dev.touch(x1, y1), ok()));
  }
  keyEvent(keycode: string): Promise<StepResult> {
    return this.dev.answer(undefined, () => (this.dev.key(keycode), ok()));
  }
  keyEvents(keycodes: readonly string[]): Promise<StepResult> {
    return this.dev.answer(undefined, () => {
      for (const k of keycodes) this.dev.key(k);
      return ok();
    });
  }
  /** Typing does nothing to a fake app's state (its apps take touches and keys). */
  text(_text: string): Promise<StepResult> {
    return this.dev.answer(undefined, () => ok());
  }
  async close(): Promise<void> {
    this.down = false;
  }
  /** Whether a finger is down (for tests). */
  get fingerDown(): boolean {
    return this.down;
  }
}

/** Filter specs `Tag:P` (+ the implied `*:S`), as logcat applies them. */
function wanted(filters: readonly string[], rec: LogcatRecord): boolean {
  const order = "VDIWEF";
  for (const f of filters) {
    const [tag, prio = "V"] = f.split(":");
    if (tag === rec.tag || tag === "*") return prio !== "S" && order.indexOf(rec.priority) >= order.indexOf(prio);
  }
  return false;
}

class FakeLogcat implements LogcatStream {
  private readonly listeners: ((rec: LogcatRecord) => void)[] = [];
  private readonly failedListeners: ((reason: string) => void)[] = [];
  private _state: LogcatStream["state"] = "open";
  readonly malformedLines = 0;
  constructor(
    private readonly filters: readonly string[],
    private readonly detach: () => void,
  ) {}
  get state(): LogcatStream["state"] {
    return this._state;
  }
  onRecord(listener: (rec: LogcatRecord) => void): void {
    this.listeners.push(listener);
  }
  onFailed(listener: (reason: string) => void): void {
    this.failedListeners.push(listener);
  }
  deliver(rec: LogcatRecord): void {
    if (this._state !== "open" || !wanted(this.filters, rec)) return;
    // Lines arrive asynchronously, as from a socket.
    setImmediate(() => {
      if (this._state === "open") for (const l of this.listeners) l(rec);
    });
  }
  fail(reason: string): void {
    if (this._state !== "open") return;
    this._state = "failed";
    this.detach();
    for (const l of this.failedListeners) l(reason);
  }
  async close(): Promise<void> {
    this._state = "closed";
    this.detach();
  }
}
