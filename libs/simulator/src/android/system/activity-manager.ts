/**
 * Tasks, the foreground, screen pinning and app processes: what `am`, `input keyevent`, `dumpsys`
 * and the framebuffer consult. Apps started from the shell each get one task; the launcher is the
 * home task (id 1) and is in front whenever no app task is.
 */
import { KEYCODE_BACK, type AppCatalog } from "../app-contract.ts";
import { AppProcess, type ProcessEnv, type SavedProcess } from "./app-process.ts";
import { absoluteClass, flatComponent, relativeClass, shortComponent, type ComponentName } from "./components.ts";
import { LAUNCHER_ACTIVITY, LAUNCHER_PACKAGE, type InstalledPackage, type PackageManager } from "./package-manager.ts";
import type { LogBuffer, LogPriority } from "./log-buffer.ts";
import { coerceError } from "@farm/errors";
import { MOTION_PROFILES, type MotionTimings } from "./latency.ts";

/** What app processes ask of the rest of the system about time on screen (android-system.ts wires them). */
export interface ScreenHooks {
  motionTimings(): MotionTimings;
  /** The app in front changed its screen outside an input. */
  contentChanged(scrolled?: { x: number; y: number; dy: number }): void;
  busyUntil(atMs: number): void;
}


export const SYSTEM_SERVER_PID = 520;
export const LAUNCHER_PID = 1130;
export const HOME_TASK_ID = 1;
/** pid of the `am` process the shell runs (in system log lines). */
const SHELL_PID = 4471;

export interface TaskRecord {
  taskId: number;
  process: AppProcess;
  /** Class (absolute) the task was started with. */
  rootClass: string;
}

export type StartOutcome =
  | { kind: "started"; component: ComponentName; totalTimeMs: number }
  | { kind: "brought-to-front"; component: ComponentName }
  | { kind: "home" }
  | { kind: "no-such-activity"; component: ComponentName };

/** The task stack and every app process, as a device snapshot keeps them. */
export interface SavedActivities {
  tasks: { taskId: number; rootClass: string; process: SavedProcess }[];
  homeInFront: boolean;
  locked: number | undefined;
  nextTaskId: number;
  nextPid: number;
}

export interface StartRequest {
  component: ComponentName;
  extras: Readonly<Record<string, unknown>>;
  forceStop: boolean;
}

export class ActivityManager {
  /** Most recently used first; tasks[0] is in front unless the launcher is. */
  private tasks: TaskRecord[] = [];
  private homeInFront = true;
  private locked: number | undefined;
  private nextTaskId = 12;
  private nextPid: number;
  private readonly env: ProcessEnv;
  private readonly changeListeners = new Set<() => void>();

  constructor(
    private readonly packages: PackageManager,
    private readonly log: LogBuffer,
    now: () => number,
    screen: { width: number; height: number },
    seed: number,
    private readonly appFactoryFor: AppCatalog,
    services: ScreenHooks & Pick<ProcessEnv, "settings" | "fs">,
  ) {
    this.nextPid = 3000 + (Math.abs(Math.floor(seed)) % 1000);
    this.env = {
      log,
      now,
      screen,
      finishTask: (proc) => this.finishTaskOf(proc),
      refreshTicking: () => this.refreshTicking(),
      motionTimings: () => services.motionTimings(),
      contentChanged: (proc, scrolled) => {
        if (proc === this.foregroundProcess()) services.contentChanged(scrolled);
      },
      busyUntil: (atMs) => services.busyUntil(atMs),
      crash: (proc, error) => this.crashProcess(proc, error),
      settings: services.settings,
      fs: services.fs,
    };
  }

  private sysLog(priority: LogPriority, tag: string, message: string): void {
    this.log.append({ pid: SYSTEM_SERVER_PID, tid: SYSTEM_SERVER_PID + 27, priority, tag, message, buffer: "system" });
  }

  /** The task in front, or undefined when the launcher is. */
  foregroundTask(): TaskRecord | undefined {
    return this.homeInFront ? undefined : this.tasks[0];
  }

  foregroundProcess(): AppProcess | undefined {
    return this.foregroundTask()?.process;
  }

  allTasks(): readonly TaskRecord[] {
    return this.tasks;
  }

  lockedTaskId(): number | undefined {
    return this.locked;
  }

  /** Component of the activity in front (`pkg/pkg.Activity`), the launcher's when no app is. */
  currentComponent(): ComponentName {
    const t = this.foregroundTask();
    return t ? this.topComponent(t) : { packageName: LAUNCHER_PACKAGE, className: LAUNCHER_ACTIVITY };
  }

  topComponent(t: TaskRecord): ComponentName {
    return { packageName: t.process.packageName, className: absoluteClass(t.process.packageName, t.process.app.activity) };
  }

  rootComponent(t: TaskRecord): ComponentName {
    return { packageName: t.process.packageName, className: t.rootClass };
  }

  private taskOf(packageName: string): TaskRecord | undefined {
    return this.tasks.find((t) => t.process.packageName === packageName);
  }

  private bringToFront(t: TaskRecord): void {
    this.tasks = [t, ...this.tasks.filter((x) => x !== t)];
    this.homeInFront = false;
  }

  start(req: StartRequest): StartOutcome {
    const { component } = req;
    const pkg = this.packages.get(component.packageName);
    if (!pkg || !pkg.activities.includes(component.className)) return { kind: "no-such-activity", component };
    this.sysLog("I", "ActivityTaskManager", `START u0 {flg=0x10000000 cmp=${shortComponent(component)}${Object.keys(req.extras).length ? " (has extras)" : ""}} from uid 2000`);
    if (pkg.name === LAUNCHER_PACKAGE) {
      this.goHome(true);
      return { kind: "home" };
    }
    if (req.forceStop) this.forceStop(pkg.name);
    const existing = this.taskOf(pkg.name);
    if (this.locked !== undefined && existing?.taskId !== this.locked) {
      // Starting another app ends screen pinning here (a real device would refuse the start).
      this.unlockTask();
    }
    const relative = relativeClass(pkg.name, component.className);
    if (existing) {
      const wasFront = this.foregroundTask() === existing;
      this.bringToFront(existing);
      const proc = existing.process;
      if (wasFront && proc.app.activity === relative) {
        this.changed();
        return { kind: "brought-to-front", component };
      }
      proc.guard(() => proc.app.onNewIntent?.(relative));
      this.changed();
      return { kind: "started", component, totalTimeMs: 45 };
    }
    const proc = this.spawn(pkg, relative, req.extras);
    if (!proc.alive) return { kind: "started", component, totalTimeMs: 0 };
    const task: TaskRecord = { taskId: this.nextTaskId++, process: proc, rootClass: component.className };
    this.tasks.unshift(task);
    this.homeInFront = false;
    const totalTimeMs = 280 + (proc.pid % 97);
    this.sysLog("I", "ActivityTaskManager", `Displayed ${shortComponent(component)}: +${totalTimeMs}ms`);
    this.changed();
    return { kind: "started", component, totalTimeMs };
  }

  private spawn(pkg: InstalledPackage, relative: string, extras: Readonly<Record<string, unknown>>): AppProcess {
    const pid = this.nextPid++;
    const rlEnabled = extras["RL_TASK_ENABLED"] === true || extras["RL_TASK_ENABLED"] === "true";
    let config: Record<string, unknown> = {};
    let configError: string | undefined;
    const rawConfig = extras["RL_TASK_GAME_CONFIG"];
    if (rawConfig !== undefined) {
      try {
        const parsed: unknown = JSON.parse(String(rawConfig));
        if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) config = parsed as Record<string, unknown>;
        else configError = "not a JSON object";
      } catch (e) {
        configError = coerceError(e).message;
      }
    }
    this.sysLog("I", "ActivityManager", `Start proc ${pid}:${pkg.name}/u0a${pkg.uid - 10000} for activity {${pkg.name}/${absoluteClass(pkg.name, relative)}}`);
    if (configError !== undefined) {
      this.log.append({ pid, tid: pid, priority: "E", tag: "AndroidRLTask", message: `invalid RL_TASK_GAME_CONFIG ${JSON.stringify(String(rawConfig))}: ${configError}; using defaults` });
    }
    // The process is constructed by the factory; an exception there is a crash at start.
    let proc: AppProcess;
    try {
      proc = new AppProcess(this.env, pkg, pid, rlEnabled, config, this.appFactoryFor(pkg.app, pkg.label), relative);
    } catch (e) {
      this.logCrash(pkg.name, pid, e);
      const dead = new AppProcess(this.env, pkg, pid, false, {}, this.appFactoryFor("static", pkg.label), relative);
      dead.kill();
      return dead;
    }
    return proc;
  }

  /** `am force-stop`: kills the package's process and removes its task. */
  forceStop(packageName: string): boolean {
    const t = this.taskOf(packageName);
    const pkg = this.packages.get(packageName);
    if (pkg) this.sysLog("I", "ActivityManager", `Force stopping ${packageName} appid=${pkg.uid} user=0: from pid ${SHELL_PID}`);
    if (!t) return false;
    this.removeTask(t);
    if (t.process.alive) this.sysLog("I", "ActivityManager", `Killing ${t.process.pid}:${packageName}/u0a${(pkg?.uid ?? 10000) - 10000} (adj 0): stop ${packageName}`);
    t.process.kill();
    this.changed();
    return true;
  }

  private removeTask(t: TaskRecord): void {
    const wasFront = this.foregroundTask() === t;
    this.tasks = this.tasks.filter((x) => x !== t);
    if (this.locked === t.taskId) this.locked = undefined;
    if (wasFront) this.homeInFront = true;
  }

  /** HOME: the launcher comes to the front unless a task is pinned. Returns whether it did. */
  goHome(force = false): boolean {
    if (this.locked !== undefined && !force) {
      this.sysLog("W", "ActivityTaskManager", "Lock task mode active: HOME ignored");
      return false;
    }
    if (force) this.locked = undefined;
    this.homeInFront = true;
    this.changed();
    return true;
  }

  /** BACK: the app may consume it; otherwise its task finishes (unless pinned). */
  back(): void {
    const t = this.foregroundTask();
    if (!t) return;
    let consumed = false;
    t.process.guard(() => (consumed = t.process.app.onKey?.(KEYCODE_BACK) ?? false));
    if (consumed || !t.process.alive) return this.changed();
    this.finishTaskOf(t.process);
  }

  finishTaskOf(proc: AppProcess): boolean {
    const t = this.tasks.find((x) => x.process === proc);
    if (!t) return false;
    if (this.locked === t.taskId) {
      this.sysLog("W", "ActivityTaskManager", `Lock task mode active: finishing task ${t.taskId} refused`);
      return false;
    }
    this.removeTask(t);
    proc.kill();
    this.changed();
    return true;
  }

  lockTask(taskId: number): boolean {
    const t = this.tasks.find((x) => x.taskId === taskId);
    if (!t) return false;
    this.bringToFront(t);
    this.locked = taskId;
    this.sysLog("I", "ActivityTaskManager", `startLockTaskMode: ${t.process.packageName} task ${taskId}`);
    this.changed();
    return true;
  }

  unlockTask(): void {
    if (this.locked === undefined) return;
    this.sysLog("I", "ActivityTaskManager", "stopLockTaskMode");
    this.locked = undefined;
    this.changed();
  }

  /** The process in front dies (fault injection); no-op when the launcher is in front. */
  crashForeground(): boolean {
    const proc = this.foregroundProcess();
    if (!proc) return false;
    this.crashProcess(proc, new Error("simulated crash (fault injection)"));
    return true;
  }

  private logCrash(packageName: string, pid: number, error: unknown): void {
    const msg = error instanceof Error ? error.message : String(error);
    const crash = (message: string): void => this.log.append({ pid, tid: pid, priority: "E", tag: "AndroidRuntime", message, buffer: "crash" });
    crash("FATAL EXCEPTION: main");
    crash(`Process: ${packageName}, PID: ${pid}`);
    crash(`java.lang.RuntimeException: ${msg}`);
    crash(`\tat ${packageName}.MainActivity.onSimulatedFault(MainActivity.java:42)`);
    this.sysLog("I", "ActivityManager", `Process ${packageName} (pid ${pid}) has died: fore TOP`);
  }

  private crashProcess(proc: AppProcess, error: unknown): void {
    if (!proc.alive) return;
    this.logCrash(proc.packageName, proc.pid, error);
    const t = this.tasks.find((x) => x.process === proc);
    if (t) this.removeTask(t);
    proc.kill();
    this.changed();
  }

  /** Stops every process (device shutdown). */
  killAll(): void {
    for (const t of this.tasks) t.process.kill();
    this.tasks = [];
    this.locked = undefined;
    this.homeInFront = true;
  }

  saveState(): SavedActivities {
    return {
      tasks: this.tasks.filter((t) => t.process.alive).map((t) => ({ taskId: t.taskId, rootClass: t.rootClass, process: t.process.saveState() })),
      homeInFront: this.homeInFront,
      locked: this.locked,
      nextTaskId: this.nextTaskId,
      nextPid: this.nextPid,
    };
  }

  /** Replaces every task and process with the saved ones (packages must be restored first). */
  restoreState(state: SavedActivities): void {
    this.killAll();
    this.tasks = state.tasks.map((t) => {
      const pkg = this.packages.get(t.process.packageName);
      if (!pkg) throw new Error(`snapshot has a task of ${t.process.packageName}, which the snapshot's packages lack`);
      return { taskId: t.taskId, rootClass: t.rootClass, process: AppProcess.revive(this.env, pkg, t.process, this.appFactoryFor(pkg.app, pkg.label)) };
    });
    this.homeInFront = state.homeInFront;
    this.locked = state.locked;
    this.nextTaskId = state.nextTaskId;
    this.nextPid = state.nextPid;
    this.changed();
  }

  /** Only the process in front ticks; everything else is paused (keeps idle devices free). */
  refreshTicking(): void {
    const front = this.foregroundProcess();
    for (const t of this.tasks) t.process.setTicking(t.process === front);
  }

  /** After any change of the foreground or of a task: only the app in front may tick; listeners (accessibility events) hear of it. */
  private changed(): void {
    this.refreshTicking();
    for (const l of [...this.changeListeners]) l();
  }

  /** Calls `listener` after every change of the foreground or of a task. */
  onChange(listener: () => void): void {
    this.changeListeners.add(listener);
  }

  /**
   * `am stack remove ID`: each app task is its own stack, with the task's id (as root tasks are on
   * Android 12+, where AndroidWorld passes task ids). The task ends and its process dies; an unknown
   * id does nothing; the home stack may not be removed.
   */
  removeStack(stackId: number): "removed" | "absent" | "not-standard" {
    if (stackId === 0) return "not-standard";
    const t = this.tasks.find((x) => x.taskId === stackId);
    if (!t) return "absent";
    this.sysLog("I", "ActivityTaskManager", `removeStack: ${stackId} (${t.process.packageName})`);
    this.removeTask(t);
    t.process.kill();
    this.changed();
    return "removed";
  }

  /** `am stack list`, Android 9/10 shape: one stack per task, the front one first. */
  stackList(width: number, height: number): string {
    const lines: string[] = [];
    const bounds = `[0,0][${width},${height}]`;
    const taskLine = (id: number, base: string, top: string, visible: boolean): string =>
      `  taskId=${id}: ${base} bounds=${bounds} userId=0 visible=${visible} topActivity=ComponentInfo{${top}}`;
    const launcher = flatComponent({ packageName: LAUNCHER_PACKAGE, className: LAUNCHER_ACTIVITY });
    const stackHead = (stackId: number, activityType: string, seq: number): void => {
      lines.push(`Stack id=${stackId} bounds=${bounds} displayId=0 userId=0`);
      lines.push(` configuration={1.0 ?mcc?mnc [en_US] ldltr sw${width}dp w${width}dp h${height}dp 160dpi nrml port finger -keyb/v/h -nav/h winConfig={ mBounds=Rect(0, 0 - ${width}, ${height}) mAppBounds=Rect(0, 0 - ${width}, ${height}) mWindowingMode=fullscreen mDisplayWindowingMode=fullscreen mActivityType=${activityType}} s.${seq}}`);
    };
    const home = (): void => {
      stackHead(0, "home", 1);
      lines.push(taskLine(HOME_TASK_ID, launcher, launcher, this.homeInFront));
    };
    if (this.homeInFront) home();
    this.tasks.forEach((t, i) => {
      stackHead(t.taskId, "standard", t.taskId);
      lines.push(taskLine(t.taskId, flatComponent(this.rootComponent(t)), flatComponent(this.topComponent(t)), !this.homeInFront && i === 0));
    });
    if (!this.homeInFront) home();
    return lines.join("\n") + "\n";
  }
}
