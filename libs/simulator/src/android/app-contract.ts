/**
 * The contract between the simulated Android (its activity manager and input) and a simulated app:
 * android/ and apps/ both import it from here (apps/ sits above android/).
 * An app instance is one app process: created on a fresh start, destroyed by force-stop, `pm clear`,
 * leaving its task, or a crash.
 */
import type { Canvas } from "../graphics/canvas.ts";
import type { LogPriority } from "./system/log-buffer.ts";
import type { MotionTimings } from "./system/latency.ts";

export type { MotionTimings };
import type { SettingsNamespace } from "./system/settings-store.ts";
import { KEYCODE } from "@farm/key-codes";

export const KEYCODE_HOME = KEYCODE.HOME;
export const KEYCODE_BACK = KEYCODE.BACK;
export const KEYCODE_ENTER = KEYCODE.ENTER;

export type TouchAction = "down" | "move" | "up";

/**
 * One view of the app's layout: printed by `dumpsys activity <pkg> <pkg>` under `View Hierarchy:`,
 * and reported to accessibility (`uiautomator dump`, the accessibility forwarder) with the fields an
 * AccessibilityNodeInfo carries. Bounds are in the natural (portrait) frame; the system rotates them.
 * Flags default to false (`enabled` to true).
 */
export interface ViewNode {
  /** Class name, e.g. `android.widget.TextView`. */
  cls: string;
  /** Resource id, e.g. `app:id/note_1`. */
  id?: string;
  /** left, top, right, bottom in screen pixels (natural frame). */
  bounds: [number, number, number, number];
  children?: ViewNode[];
  text?: string;
  /** Content description. */
  desc?: string;
  /** Hint of an editable field, shown while it is empty. */
  hint?: string;
  /**
   * What keeps this view's accessibility id while the view lives (e.g. a note's id in a list that
   * scrolls); default: the resource id, else the position among its siblings.
   */
  key?: string;
  clickable?: boolean;
  longClickable?: boolean;
  scrollable?: boolean;
  checkable?: boolean;
  checked?: boolean;
  focusable?: boolean;
  focused?: boolean;
  enabled?: boolean;
  selected?: boolean;
  password?: boolean;
  editable?: boolean;
  /** Text selection (the cursor when both are equal) of an editable field. */
  selection?: [number, number];
}

/** The accessibility actions an app may carry out on one of its views (AccessibilityNodeInfo.ACTION_*). */
export type ViewAction = "click" | "long_click" | "focus" | "scroll_forward" | "scroll_backward" | "set_text";

/** The settings provider as an app's ContentResolver reaches it (Settings.System / Secure / Global). */
export interface AppSettings {
  get(ns: SettingsNamespace, key: string): string | undefined;
  /** Writes the value; the system hears of it as of any provider write (rotation, the forwarder, accessibility events). */
  put(ns: SettingsNamespace, key: string, value: string): void;
}

/** The app's private storage, `/data/data/<package>/`; paths are relative to it and stay inside it. */
export interface AppFiles {
  /** `/data/data/<package>` */
  readonly dataDir: string;
  /** The file's bytes (the same array until the file is written again), undefined when absent. */
  read(relPath: string): Uint8Array | undefined;
  write(relPath: string, data: Uint8Array): void;
}

export interface AppHost {
  readonly packageName: string;
  /** The settings provider (the store `settings get|put` and `svc` use). */
  readonly settings: AppSettings;
  /** The app's data folder on the device's file system (what `adb pull` and the shell see). */
  readonly files: AppFiles;
  readonly pid: number;
  readonly screen: { width: number; height: number };
  /** `--ez RL_TASK_ENABLED true` was given at start. */
  readonly rlEnabled: boolean;
  /** Parsed `--es RL_TASK_GAME_CONFIG <json>` ({} when absent or invalid). */
  readonly config: Readonly<Record<string, unknown>>;
  now(): number;
  log(priority: LogPriority, tag: string, message: string, tid?: number): void;
  /** A line in the AndroidRLTask convention (tag AndroidRLTask, priority I); dropped unless RL is enabled. */
  rl(message: string, tid?: number): void;
  /** Leaves the app (its Exit button): the task finishes and the launcher comes up. False while screen-pinned. */
  finishTask(): boolean;
  /** Re-evaluates `wantsTicks()`; call after state changes that start or stop real-time play. */
  refreshTicking(): void;
  /**
   * How long screen changes take on this device now: the latency profile's timings under the global
   * animation scales (all 0 under `instant`).
   */
  motionTimings(): MotionTimings;
  /**
   * The app's screen changed outside an input (a tick of an animation): accessibility looks again
   * (TYPE_WINDOW_CONTENT_CHANGED); with `scrolled`, the scrollable view at natural-frame point (x, y)
   * moved by `dy` pixels (TYPE_VIEW_SCROLLED). Ignored unless the app is in front.
   */
  contentChanged(scrolled?: { x: number; y: number; dy: number }): void;
  /** Benchmark ground truth: a transition the latest input started ends at `atMs` (device clock; Infinity: never). */
  busyUntil(atMs: number): void;
}

export interface SimApp {
  /** Short class name of the activity in front, e.g. `MainActivity`. */
  readonly activity: string;
  /** Real-time apps: tick period in ms while the activity is in front and `wantsTicks()` holds. */
  readonly tickMs?: number;
  wantsTicks?(): boolean;
  tick?(): void;
  /** Raw touch stream (every down / move / up). */
  onTouch?(action: TouchAction, x: number, y: number): void;
  /** A down/up pair that stayed within the touch slop. */
  onTap?(x: number, y: number): void;
  /**
   * A down/up pair within the touch slop held for LONG_PRESS_TIMEOUT_MS or more (Android's long press). Optional:
   * an app without it gets `onTap` instead, as a view without a long-click listener performs a click on UP.
   */
  onLongPress?(x: number, y: number): void;
  /** A down/up pair that moved further than the touch slop. */
  onSwipe?(x1: number, y1: number, x2: number, y2: number): void;
  /** Returns true when the app consumed the key (e.g. BACK inside the app); else the system handles it. */
  onKey?(keycode: number): boolean;
  onText?(text: string): void;
  /** `am start` of one of its activities while the process runs (the task is brought to the front). */
  onNewIntent?(activityClass: string): void;
  /** A snapshot of the app's own state for tests and tools (plain data). */
  state?(): unknown;
  render(canvas: Canvas): void;
  /** The content view of the activity in front (dumpsys wraps it in DecorView etc.). */
  viewHierarchy(): ViewNode;
  /** A dialog or popup over the activity, reported as a window of its own (null when none is open). */
  dialogHierarchy?(): ViewNode | undefined;
  /**
   * An accessibility action on the view whose key (see ViewNode.key) is `key`; true when the app
   * carried it out. `text` goes with `set_text`.
   */
  onViewAction?(key: string, action: ViewAction, text?: string): boolean;
  onDestroy?(): void;
}

export interface AppLaunch {
  /** Short class name of the activity being started, e.g. `MainActivity`. */
  activity: string;
}

export type AppFactory = (host: AppHost, launch: AppLaunch) => SimApp;

/**
 * The app implementation for the id a simulated APK names in its `app` field (unknown ids and system
 * apps: a static screen titled `label`). The device hands it to the simulated Android, so android/
 * never imports the apps above it.
 */
export type AppCatalog = (appId: string, label: string) => AppFactory;
