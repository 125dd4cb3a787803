/**
 * Delivers input to the app in front: raw touches (`onTouch`), recognised taps and swipes, keys and
 * text. A DOWN … MOVE … UP sequence — from `input tap`/`swipe` or from separate `input motionevent`
 * calls — ends as a tap when the finger stayed within the touch slop, else as a swipe from the DOWN
 * point to the UP point; a tap held LONG_PRESS_TIMEOUT_MS or more is a long press for an app that takes one. HOME and BACK go to the activity manager. Each input event may be dropped
 * (fault injection) before it reaches anything.
 */
import { KEYCODE_BACK, KEYCODE_HOME, type TouchAction } from "../app-contract.ts";
import type { ActivityManager } from "./activity-manager.ts";
import type { FaultInjector } from "./faults.ts";
import type { PackageManager } from "./package-manager.ts";
import { launcherHit } from "./launcher.ts";
import { sleepMs } from "../shell/io.ts";
import { displaySize, displayToNatural, type Rotation } from "../../graphics/orientation.ts";
import type { Accessibility } from "./accessibility.ts";
import type { SettleLog } from "./settle-log.ts";

/** How long a finger stays down for a long press (ViewConfiguration's DEFAULT_LONG_PRESS_TIMEOUT before Android 12). */
export const LONG_PRESS_TIMEOUT_MS = 500;

export class InputDispatcher {
  private downAt: { x: number; y: number } | undefined;
  /** When the finger went down (real time: a held finger is a long press). */
  private downTime = 0;
  /** Where the finger went down, in display coordinates (what accessibility bounds use). */
  private downShown: { x: number; y: number } | undefined;
  private readonly slop: number;

  constructor(
    private readonly am: ActivityManager,
    private readonly packages: PackageManager,
    private readonly faults: FaultInjector,
    private readonly screen: { width: number; height: number },
    private readonly rotation: () => Rotation = () => 0,
    /** Where accessibility events about input go (view clicked, text changed, scrolled). */
    private readonly a11y?: Accessibility,
    /** Benchmark ground truth: each delivered input is recorded before it reaches the app. */
    private readonly settle?: SettleLog,
  ) {
    this.slop = Math.max(8, Math.round(0.02 * Math.min(screen.width, screen.height)));
  }

  /** One `input` event as a whole; false when the fault injector dropped it. */
  private admit(): boolean {
    if (this.faults.shouldDropInput()) return false;
    this.settle?.input();
    return true;
  }

  /** Forgets a finger that is down (a snapshot load: the restored device has no touch in progress). */
  reset(): void {
    this.downAt = undefined;
  }

  tap(x: number, y: number): void {
    if (!this.admit()) return;
    this.touch("down", x, y);
    this.touch("up", x, y);
  }

  /**
   * DOWN, MOVEs, UP. With a duration the moves are spread over it in real time, as `input swipe … ms`
   * does on a device (a closed stream finishes the gesture at once).
   */
  async swipe(x1: number, y1: number, x2: number, y2: number, durationMs = 0, signal?: AbortSignal): Promise<void> {
    if (!this.admit()) return;
    const steps = 4;
    this.touch("down", x1, y1);
    for (let i = 1; i <= steps; i++) {
      if (durationMs > 0) await sleepMs(durationMs / steps, signal);
      this.touch("move", x1 + ((x2 - x1) * i) / steps, y1 + ((y2 - y1) * i) / steps);
    }
    this.touch("up", x2, y2);
  }

  motion(action: TouchAction | "cancel", x: number, y: number): void {
    if (!this.admit()) return;
    if (action === "cancel") {
      this.downAt = undefined;
      return;
    }
    this.touch(action, x, y);
  }

  /**
   * A second (third, …) finger while the first is down: apps see it in their raw touch stream
   * (e.g. a paddle follows it); taps and swipes are recognised from the first finger only.
   */
  extraPointer(action: TouchAction, xIn: number, yIn: number): void {
    if (!this.admit()) return;
    const rot = this.rotation();
    const shown = displaySize(this.screen.width, this.screen.height, rot);
    const p = displayToNatural(Math.min(shown.width - 1, Math.max(0, xIn)), Math.min(shown.height - 1, Math.max(0, yIn)), this.screen.width, this.screen.height, rot);
    const proc = this.am.foregroundProcess();
    proc?.guard(() => proc.app.onTouch?.(action, p.x, p.y));
  }

  key(keycode: number): void {
    if (!this.admit()) return;
    if (keycode === KEYCODE_HOME) return void this.am.goHome();
    if (keycode === KEYCODE_BACK) return this.am.back();
    const proc = this.am.foregroundProcess();
    this.editing(() => proc?.guard(() => proc.app.onKey?.(keycode)));
    this.am.refreshTicking();
  }

  text(text: string): void {
    if (!this.admit()) return;
    const proc = this.am.foregroundProcess();
    this.editing(() => proc?.guard(() => proc.app.onText?.(text)));
    this.am.refreshTicking();
  }

  /** Delivers a key or text; when the focused editable's text changed, a TYPE_VIEW_TEXT_CHANGED says how. */
  private editing(deliver: () => void): void {
    const a11y = this.a11y;
    if (!a11y?.listening) return deliver();
    const before = a11y.focusedEditable();
    a11y.hold(deliver);
    const after = before && a11y.nodeById(before.uniqueId);
    if (before && after && after.text !== before.text) a11y.emit("TYPE_VIEW_TEXT_CHANGED", after, textChange(before.text, after.text));
    a11y.checkChanges();
  }

  /** Delivers a recognised tap or swipe; accessibility hears of a click on a clickable node, a scroll over a scrollable one. */
  private gesture(isTap: boolean, end: { x: number; y: number }, deliver: () => void): void {
    const a11y = this.a11y;
    const at = this.downShown;
    if (!a11y?.listening || !at) return deliver();
    const node = a11y.nodeAt(at.x, at.y, isTap ? (n) => n.clickable : (n) => n.scrollable);
    // A click event goes out as the click is performed, before what it opens announces itself.
    if (node && isTap) a11y.emit("TYPE_VIEW_CLICKED", node);
    a11y.hold(deliver);
    if (node && !isTap) a11y.emit("TYPE_VIEW_SCROLLED", a11y.nodeById(node.uniqueId) ?? node, { scrollDeltaX: Math.round(at.x - end.x), scrollDeltaY: Math.round(at.y - end.y) });
    a11y.checkChanges();
  }

  /** (xIn, yIn) are display coordinates (what screencap shows); apps get natural-frame coordinates. */
  private touch(action: TouchAction, xIn: number, yIn: number): void {
    const rot = this.rotation();
    const shown = displaySize(this.screen.width, this.screen.height, rot);
    const natural = displayToNatural(Math.min(shown.width - 1, Math.max(0, xIn)), Math.min(shown.height - 1, Math.max(0, yIn)), this.screen.width, this.screen.height, rot);
    const x = natural.x;
    const y = natural.y;
    const proc = this.am.foregroundProcess();
    // Like Android's input dispatcher, MOVE/UP without a preceding DOWN (e.g. the DOWN was dropped) are discarded.
    if (action === "down") {
      this.downAt = { x, y };
      this.downShown = { x: xIn, y: yIn };
      this.downTime = performance.now();
    } else if (!this.downAt) return;
    proc?.guard(() => proc.app.onTouch?.(action, x, y));
    if (action !== "up") return;
    const start = this.downAt!;
    this.downAt = undefined;
    const isTap = Math.hypot(x - start.x, y - start.y) <= this.slop;
    if (!proc) {
      if (isTap) this.gesture(true, { x: xIn, y: yIn }, () => this.launcherTap(start.x, start.y));
      return;
    }
    const app = proc.app;
    const long = isTap && app.onLongPress !== undefined && performance.now() - this.downTime >= LONG_PRESS_TIMEOUT_MS;
    this.gesture(isTap, { x: xIn, y: yIn }, () => proc.guard(() => (long ? app.onLongPress?.(start.x, start.y) : isTap ? app.onTap?.(start.x, start.y) : app.onSwipe?.(start.x, start.y, x, y))));
    this.am.refreshTicking();
  }

  private launcherTap(x: number, y: number): void {
    const pkg = launcherHit(this.packages, x, y, this.screen.width, this.screen.height);
    if (!pkg) return;
    this.am.start({ component: { packageName: pkg.name, className: pkg.activities[0]! }, extras: {}, forceStop: false });
  }
}

/** fromIndex / addedCount / removedCount of an edit, as AccessibilityEvent reports a text change (common prefix and suffix kept). */
export function textChange(before: string, after: string): { beforeText: string; fromIndex: number; addedCount: number; removedCount: number } {
  let from = 0;
  while (from < before.length && from < after.length && before[from] === after[from]) from++;
  let tail = 0;
  while (tail < before.length - from && tail < after.length - from && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
  return { beforeText: before, fromIndex: from, addedCount: after.length - from - tail, removedCount: before.length - from - tail };
}
