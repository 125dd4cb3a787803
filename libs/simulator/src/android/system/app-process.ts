/** One running app process: hosts a SimApp instance, owns its pid and its real-time tick timer. */
import type { AppFiles, AppHost, AppSettings, SimApp, AppFactory, MotionTimings } from "../app-contract.ts";
import { normalizePath, type SimFileSystem } from "./file-system.ts";
import type { LogBuffer, LogPriority } from "./log-buffer.ts";
import type { InstalledPackage } from "./package-manager.ts";
import { restoreAppFields, saveAppFields, type SavedValue } from "./app-state.ts";

/** One app process as a device snapshot keeps it. */
export interface SavedProcess {
  packageName: string;
  pid: number;
  rlEnabled: boolean;
  config: Record<string, unknown>;
  startActivity: string;
  appFields: Record<string, SavedValue>;
}

export const RL_TAG = "AndroidRLTask";

export interface ProcessEnv {
  log: LogBuffer;
  now: () => number;
  screen: { width: number; height: number };
  /** Asks the system to finish this process's task; false while screen-pinned. */
  finishTask(proc: AppProcess): boolean;
  /** Re-evaluates which process may tick. */
  refreshTicking(): void;
  /** What screen changes take now (profile and animation scales). */
  motionTimings(): MotionTimings;
  /** The process's screen changed outside an input (see AppHost.contentChanged). */
  contentChanged(proc: AppProcess, scrolled?: { x: number; y: number; dy: number }): void;
  /** Ground truth for benchmarks (see AppHost.busyUntil). */
  busyUntil(atMs: number): void;
  /** A bug in an app is a crash of that app (like an uncaught exception on its main thread). */
  crash(proc: AppProcess, error: unknown): void;
  /** The settings provider, for apps. */
  settings: AppSettings;
  /** The device's files (each app reaches its own data folder only). */
  fs: SimFileSystem;
}

/** An app's private folder, `/data/data/<package>`, on the device's file system. */
export function appDataDir(packageName: string): string {
  return `/data/data/${packageName}`;
}

/** `muted`: while a snapshot revives the process, whose constructor's writes are already in the restored files. */
function appFiles(fs: SimFileSystem, packageName: string, nowSec: () => number, muted: () => boolean): AppFiles {
  const dataDir = appDataDir(packageName);
  const inside = (rel: string): string => {
    const p = normalizePath(`${dataDir}/${rel}`);
    if (!p.startsWith(dataDir + "/")) throw new Error(`${rel}: outside the app's data folder ${dataDir}`);
    return p;
  };
  return {
    dataDir,
    read: (rel) => fs.read(inside(rel)),
    write: (rel, data) => {
      const p = inside(rel);
      if (!muted()) fs.write(p, data, 0o660, nowSec());
    },
  };
}

export class AppProcess implements AppHost {
  readonly app: SimApp;
  private timer: NodeJS.Timeout | undefined;
  private dead = false;
  /** While a snapshot revives the process: its constructor's log lines are already in the restored log. */
  private quiet = false;
  readonly files: AppFiles;
  readonly settings: AppSettings;

  constructor(
    private readonly env: ProcessEnv,
    readonly pkg: InstalledPackage,
    readonly pid: number,
    readonly rlEnabled: boolean,
    readonly config: Readonly<Record<string, unknown>>,
    factory: AppFactory,
    readonly startActivity: string,
    quiet = false,
  ) {
    this.quiet = quiet;
    this.files = appFiles(env.fs, pkg.name, () => Math.floor(env.now() / 1000), () => this.quiet);
    // Like its files, a reviving process's provider writes are already in the restored settings.
    this.settings = { get: (ns, key) => env.settings.get(ns, key), put: (ns, key, value) => void (this.quiet || env.settings.put(ns, key, value)) };
    this.app = factory(this, { activity: startActivity });
    this.quiet = false;
  }

  saveState(): SavedProcess {
    return {
      packageName: this.pkg.name,
      pid: this.pid,
      rlEnabled: this.rlEnabled,
      config: JSON.parse(JSON.stringify(this.config)) as Record<string, unknown>,
      startActivity: this.startActivity,
      appFields: saveAppFields(this.app, this, this.pkg.name),
    };
  }

  /** A process as a snapshot saved it: the app is constructed silently, then its fields are put back. */
  static revive(env: ProcessEnv, pkg: InstalledPackage, saved: SavedProcess, factory: AppFactory): AppProcess {
    const proc = new AppProcess(env, pkg, saved.pid, saved.rlEnabled, saved.config, factory, saved.startActivity, true);
    restoreAppFields(proc.app, saved.appFields);
    return proc;
  }

  get packageName(): string {
    return this.pkg.name;
  }

  get screen(): { width: number; height: number } {
    return this.env.screen;
  }

  get alive(): boolean {
    return !this.dead;
  }

  now(): number {
    return this.env.now();
  }

  log(priority: LogPriority, tag: string, message: string, tid?: number): void {
    if (this.dead || this.quiet) return;
    this.env.log.append({ pid: this.pid, tid: tid ?? this.pid, priority, tag, message });
  }

  rl(message: string, tid?: number): void {
    if (this.rlEnabled) this.log("I", RL_TAG, message, tid);
  }

  finishTask(): boolean {
    return this.dead ? false : this.env.finishTask(this);
  }

  refreshTicking(): void {
    this.env.refreshTicking();
  }

  motionTimings(): MotionTimings {
    return this.env.motionTimings();
  }

  contentChanged(scrolled?: { x: number; y: number; dy: number }): void {
    if (!this.dead && !this.quiet) this.env.contentChanged(this, scrolled);
  }

  busyUntil(atMs: number): void {
    if (!this.dead && !this.quiet) this.env.busyUntil(atMs);
  }

  /** Runs an app callback; an exception kills the process like an uncaught exception would. */
  guard(fn: () => void): void {
    if (this.dead) return;
    try {
      fn();
    } catch (e) {
      this.env.crash(this, e);
    }
  }

  /** Starts or stops the tick timer; only the process in front may tick. */
  setTicking(inFront: boolean): void {
    const app = this.app;
    const want = inFront && !this.dead && app.tickMs !== undefined && app.tick !== undefined && (app.wantsTicks?.() ?? true);
    if (want && !this.timer) {
      this.timer = setInterval(() => this.guard(() => app.tick!()), app.tickMs);
      this.timer.unref();
    } else if (!want && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  get ticking(): boolean {
    return this.timer !== undefined;
  }

  kill(): void {
    if (this.dead) return;
    this.setTicking(false);
    try {
      this.app.onDestroy?.();
    } catch {
      // a dying process has nobody to report to
    }
    this.dead = true;
  }
}
