/**
 * The base of apps built with the toolkit: the app describes its page (and an open dialog) as one
 * widget tree from its plain state; this class draws it, routes taps, swipes, keys, typed text and
 * accessibility actions through it, and reports it. Focus on a text field brings up the on-screen
 * keyboard at the bottom; the page is laid out above it (adjustResize).
 *
 * Screen changes take the device's time (motion.ts): after each input the class compares what it
 * changed (the page's root key, the dialog, the keyboard, a swipe over a list) and runs the transition
 * over the profile's timings, ticking while something moves and telling accessibility after each tick.
 * Under the `instant` profile every timing is 0: nothing moves, nothing ticks, as before.
 */
import type { Canvas } from "../../graphics/canvas.ts";
import { KEYCODE_BACK, KEYCODE_ENTER, type AppHost, type SimApp, type ViewAction, type ViewNode } from "../../android/app-contract.ts";
import { keyboard, KEYBOARD_ROWS, type KeyPress } from "./keyboard.ts";
import { paintTree } from "./paint.ts";
import { findKey, inside, performAction, toViewNode, widgetAt, type Box, type Widget } from "./widget.ts";
import { COLORS, panel } from "./widgets.ts";
import { eased, flingTravel, mapWidgets, moving, noMotion, offset, rowHeightOf, running, spinner, strip, type MotionState } from "./motion.ts";
import { KEYCODE } from "@farm/key-codes";

export const KEYCODE_DEL = KEYCODE.DEL;
/** Longest text a field holds (typing beyond it is ignored, as with android:maxLength). */
export const FIELD_MAX_CHARS = 200;
const KEY_ROW_DP = 44;
/** How often a moving screen is redrawn and looked at again (a frame every 50 ms). */
const MOTION_TICK_MS = 50;

/** What an input may have changed, seen before and after it. */
interface Look {
  page: string | undefined;
  keyboard: boolean;
  dialog: Widget | undefined;
  slow: boolean;
}

export abstract class UiApp implements SimApp {
  /** Key of the focused text field (the keyboard shows while it is on the page). */
  protected focused: string | undefined = undefined;

  /** Transitions in progress (plain data: snapshots keep it). */
  private motion: MotionState = noMotion();
  /** When the process started (a slow list starts loading then). */
  private readonly bornAt: number;
  readonly tickMs = MOTION_TICK_MS;
  /**
   * Keys of lists whose contents load after the profile's `listLoadMs` each time their page comes up
   * (a spinner until then); an app opts in by naming them. RL_TASK_GAME_CONFIG `list_load_ms` (a
   * number; -1: never) overrides the profile, for tests of a screen that never settles.
   */
  protected readonly slowLists: readonly string[] = [];

  constructor(protected readonly host: AppHost) {
    this.bornAt = host.now();
  }

  abstract readonly activity: string;
  /** The page in `box` (the screen, or the part above the keyboard). */
  protected abstract page(box: Box): Widget;
  /** The open dialog, if any (a window of its own). */
  protected dialog(): Widget | undefined {
    return undefined;
  }
  /** BACK or Cancel-by-touching-outside while the dialog is open. */
  protected cancelDialog(): void {}
  /** BACK inside the app (no dialog, no keyboard); false at the app's first screen (the system then leaves it). */
  protected abstract back(): boolean;

  /** Density: 1 on the default 360-wide screen. */
  protected get dp(): number {
    return this.host.screen.width / 360;
  }

  protected focus(key: string | undefined): void {
    this.focused = key;
  }

  /**
   * The current tree in its final layout (what touches and accessibility actions reach): the window's
   * root (page, keyboard) and the dialog's. A slow list still loading shows a spinner instead of its rows.
   */
  protected tree(): { root: Widget; dialog: Widget | undefined } {
    const now = this.host.now();
    if (!this.motion.started) this.firstLook(now);
    if (this.motion.fling) this.advanceFling(now);
    const t = this.layout();
    const load = this.motion.load;
    if (!running(load, now) || this.slowLists.length === 0) return t;
    const phase = this.host.motionTimings().spinnerAnimates ? Math.floor((now - load!.from) / MOTION_TICK_MS) % 8 : 0;
    const size = Math.round(48 * this.dp);
    const root = mapWidgets(
      t.root,
      (w) => w.key !== undefined && this.slowLists.includes(w.key),
      (w) => ({ ...w, scrollable: false, focusable: false, on: undefined, children: [spinner(`${w.key}/progress`, w.bounds, size, phase)] }),
    );
    return { root, dialog: t.dialog };
  }

  /** The tree without time: the page as the app's state describes it. */
  private layout(): { root: Widget; dialog: Widget | undefined } {
    const { width: w, height: h } = this.host.screen;
    const dialog = this.dialog();
    const wrap = (children: Widget[]): Widget => panel("content", [0, 0, w, h], children, { id: "android:id/content", cls: "android.widget.FrameLayout", paint: { bg: 0xffffff } });
    if (this.focused !== undefined && !dialog) {
      const kbTop = h - Math.round(KEYBOARD_ROWS * KEY_ROW_DP * this.dp);
      const page = this.page([0, 0, w, kbTop]);
      if (findKey(page, this.focused)) return { root: wrap([page, keyboard([0, kbTop, w, h], (k) => this.press(k))]), dialog };
    }
    return { root: wrap([this.page([0, 0, w, h])]), dialog };
  }

  /** What the screen shows now: the final tree moved by the transitions in progress. */
  private shown(): { root: Widget; dialog: Widget | undefined; extra: Widget[] } {
    const now = this.host.now();
    const { root, dialog } = this.tree();
    const m = this.motion;
    const { width: w, height: h } = this.host.screen;
    const screen: Box = [0, 0, w, h];
    const extra: Widget[] = [];
    let kids = root.children ?? [];
    if (running(m.pageIn, now) && kids[0]) kids = [offset(kids[0], Math.round(w * (1 - eased(m.pageIn!, now))), 0, screen), ...kids.slice(1)];
    const kb = m.keyboard;
    if (running(kb, now)) {
      const kbTop = h - Math.round(KEYBOARD_ROWS * KEY_ROW_DP * this.dp);
      const p = eased(kb!, now);
      if (kb!.shown && kids[1]) kids = [kids[0]!, offset(kids[1], 0, Math.round((h - kbTop) * (1 - p)), screen)];
      else if (!kb!.shown) kids = [...kids, offset(strip(keyboard([0, kbTop, w, h], () => {})), 0, Math.round((h - kbTop) * p), screen)];
    }
    let shownDialog = dialog;
    if (dialog && running(m.dialogIn, now)) shownDialog = offset(dialog, 0, Math.round((h - dialog.bounds[1]) * (1 - eased(m.dialogIn!, now))), screen);
    if (!dialog && m.dialogOut && running(m.dialogOut, now)) extra.push(offset(m.dialogOut.widget, 0, Math.round((h - m.dialogOut.widget.bounds[1]) * eased(m.dialogOut, now)), screen));
    return { root: { ...root, children: kids }, dialog: shownDialog, extra };
  }

  /** The first look at the app's screen: a slow list on it starts loading from the process start. */
  private firstLook(now: number): void {
    this.motion.started = true;
    const { root } = this.layout();
    if (this.slowLists.some((k) => findKey(root, k))) this.startLoad(this.bornAt, now);
  }

  private startLoad(from: number, now: number): number {
    const cfg = this.host.config.list_load_ms;
    const ms = typeof cfg === "number" && Number.isFinite(cfg) ? cfg : this.host.motionTimings().listLoadMs;
    if (ms === 0) return now;
    this.motion.load = { from, until: ms < 0 ? -1 : from + ms };
    this.host.refreshTicking();
    return ms < 0 ? Infinity : from + ms;
  }

  private look(): Look {
    const { root, dialog } = this.layout();
    const kids = root.children ?? [];
    return { page: kids[0]?.key, keyboard: kids.length > 1, dialog: dialog && strip(dialog), slow: this.slowLists.some((k) => findKey(root, k)) };
  }

  /** Runs an input; then what it changed starts moving. */
  private input<T>(fn: () => T): T {
    const t = this.host.motionTimings();
    // Nothing can move (`instant`, or every scale 0 and no slow list): the input alone, as before.
    if (t.activityMs === 0 && t.dialogMs === 0 && t.keyboardMs === 0 && t.flingMs === 0 && (t.listLoadMs === 0 || this.slowLists.length === 0) && !Object.hasOwn(this.host.config, "list_load_ms")) return fn();
    const now = this.host.now();
    if (!this.motion.started) this.firstLook(now);
    const before = this.look();
    const out = fn();
    this.changedBy(before, this.look(), now);
    return out;
  }

  private changedBy(before: Look, after: Look, now: number): void {
    const t = this.host.motionTimings();
    const m = this.motion;
    let end = now;
    const span = (ms: number): { from: number; until: number } => {
      end = Math.max(end, now + ms);
      return { from: now, until: now + ms };
    };
    if (before.page !== after.page) {
      if (t.activityMs > 0) m.pageIn = span(t.activityMs);
      m.fling = undefined;
      m.load = undefined; // a list that was loading on the page left behind is no longer shown
      if (after.slow) end = Math.max(end, this.startLoad(now, now));
    }
    if (!before.dialog && after.dialog && t.dialogMs > 0) {
      m.dialogIn = span(t.dialogMs);
      m.dialogOut = undefined;
    } else if (before.dialog && !after.dialog && t.dialogMs > 0) {
      m.dialogOut = { ...span(t.dialogMs), widget: before.dialog };
      m.dialogIn = undefined;
    }
    if (before.keyboard !== after.keyboard && t.keyboardMs > 0) m.keyboard = { ...span(t.keyboardMs), shown: after.keyboard };
    if (end > now) {
      this.host.busyUntil(end);
      this.host.refreshTicking();
    }
  }

  /** A swipe over a list that moved it: the list keeps going, decelerating, for the profile's `flingMs`. */
  private startFling(list: Widget, x: number, y: number, dy: number): void {
    const ms = this.host.motionTimings().flingMs;
    const rowPx = rowHeightOf(list);
    if (ms <= 0 || rowPx <= 0 || list.key === undefined || Math.abs(dy) < rowPx) return;
    const now = this.host.now();
    this.motion.fling = { key: list.key, x, y, from: now, until: now + ms, total: dy, done: 0, unreported: 0, rowPx, stoppedAt: undefined };
    this.host.busyUntil(now + ms);
    this.host.refreshTicking();
  }

  /** Applies the rows a fling has travelled by `now` (decaying drags); at the list's end it stops, its edge glowing until its time is up. */
  private advanceFling(now: number): void {
    const f = this.motion.fling!;
    if (f.stoppedAt === undefined) {
      const rows = Math.trunc((flingTravel(f, now) - f.done) / f.rowPx);
      if (rows !== 0) {
        const list = findKey(this.layout().root, f.key);
        if (list?.on?.drag?.(rows * f.rowPx)) {
          f.done += rows * f.rowPx;
          f.unreported += rows * f.rowPx;
        } else f.stoppedAt = now;
      }
    }
    if (now >= f.until && f.unreported === 0) this.motion.fling = undefined;
  }

  wantsTicks(): boolean {
    return moving(this.motion, this.host.now());
  }

  /** A frame of a moving screen: the fling goes on, accessibility looks again; ticking ends when all is still. */
  tick(): void {
    const now = this.host.now();
    const f = this.motion.fling;
    if (f) this.advanceFling(now);
    let scrolled: { x: number; y: number; dy: number } | undefined;
    if (f && f.unreported !== 0) {
      scrolled = { x: f.x, y: f.y, dy: f.unreported };
      f.unreported = 0;
      if (now >= f.until) this.motion.fling = undefined;
    }
    const m = this.motion;
    for (const k of ["pageIn", "dialogIn", "dialogOut", "keyboard"] as const) if (m[k] && !running(m[k], now)) m[k] = undefined;
    if (m.load && !running(m.load, now)) m.load = undefined;
    this.host.contentChanged(scrolled);
    if (!this.wantsTicks()) this.host.refreshTicking();
  }

  private focusedField(): Widget | undefined {
    if (this.focused === undefined) return undefined;
    const f = findKey(this.tree().root, this.focused);
    return f?.editable ? f : undefined;
  }

  private press(k: KeyPress): void {
    if (k.type === "char") this.text(k.ch);
    else this.key(k.type === "del" ? KEYCODE_DEL : KEYCODE_ENTER);
  }

  onTap(x: number, y: number): void {
    this.input(() => this.tap(x, y));
  }

  private tap(x: number, y: number): void {
    const { root, dialog } = this.tree();
    if (dialog && !inside(dialog.bounds, x, y)) return this.cancelDialog();
    const w = widgetAt(dialog ?? root, x, y, (v) => v.clickable === true);
    if (w?.on?.slideTo) w.on.slideTo(x);
    else w?.on?.click?.();
  }

  /** The topmost touchable widget's long click when it has one; else what a tap does (Android clicks on UP then). */
  onLongPress(x: number, y: number): void {
    this.input(() => {
      const { root, dialog } = this.tree();
      const w = dialog ? undefined : widgetAt(root, x, y, (v) => v.clickable === true || v.longClickable === true);
      if (w?.longClickable && w.on?.longClick) return w.on.longClick();
      this.tap(x, y);
    });
  }

  onSwipe(x1: number, y1: number, x2: number, y2: number): void {
    this.input(() => {
      const { root, dialog } = this.tree();
      if (dialog) return;
      const w = widgetAt(root, x1, y1, (v) => v.scrollable === true);
      // A swipe that starts on a slider drags its thumb to where the finger left the screen.
      if (w?.on?.slideTo) w.on.slideTo(x2);
      else if (w?.on?.drag?.(y1 - y2)) this.startFling(w, x1, y1, y1 - y2);
    });
  }

  onKey(keycode: number): boolean {
    return this.input(() => this.key(keycode));
  }

  private key(keycode: number): boolean {
    if (keycode === KEYCODE_BACK) return this.onBack();
    const field = this.focusedField();
    if (!field) return false;
    if (keycode === KEYCODE_DEL) {
      field.on?.setText?.([...(field.text ?? "")].slice(0, -1).join(""));
      return true;
    }
    if (keycode === KEYCODE_ENTER) {
      if (field.on?.submit) field.on.submit();
      else this.focus(undefined);
      return true;
    }
    return false;
  }

  private onBack(): boolean {
    if (this.dialog()) {
      this.cancelDialog();
      return true;
    }
    if (this.focusedField()) {
      this.focus(undefined); // BACK first hides the keyboard, as on Android
      return true;
    }
    return this.back();
  }

  onText(text: string): void {
    this.input(() => this.text(text));
  }

  private text(text: string): void {
    const field = this.focusedField();
    if (!field) return;
    const next = [...((field.text ?? "") + text)];
    field.on?.setText?.(next.slice(0, FIELD_MAX_CHARS).join(""));
  }

  onViewAction(key: string, action: ViewAction, text?: string): boolean {
    return this.input(() => {
      const { root, dialog } = this.tree();
      const target = dialog ?? root;
      if (action === "set_text" && text !== undefined) text = [...text].slice(0, FIELD_MAX_CHARS).join("");
      return performAction(target, key, action, text);
    });
  }

  render(c: Canvas): void {
    const { root, dialog, extra } = this.shown();
    paintTree(c, root, this.dp);
    this.paintGlow(c);
    for (const d of dialog ? [dialog] : extra) {
      const b = d.bounds;
      c.rect(b[0] - 2, b[1] - 2, b[2] - b[0] + 4, b[3] - b[1] + 4, 0x424242);
      paintTree(c, d, this.dp);
    }
  }

  /** A fling that hit the list's end: a bar at that edge, fading (shrinking) until the fling's time is up. */
  private paintGlow(c: Canvas): void {
    const f = this.motion.fling;
    const now = this.host.now();
    if (!f || f.stoppedAt === undefined || now >= f.until) return;
    const list = findKey(this.layout().root, f.key);
    if (!list) return;
    const b = list.bounds;
    const hgt = Math.round(24 * this.dp * (1 - (now - f.stoppedAt) / Math.max(1, f.until - f.stoppedAt)));
    if (hgt > 0) c.rect(b[0], f.total > 0 ? b[3] - hgt : b[1], b[2] - b[0], hgt, COLORS.line);
  }

  viewHierarchy(): ViewNode {
    return toViewNode(this.shown().root);
  }

  dialogHierarchy(): ViewNode | undefined {
    const d = this.shown().dialog;
    return d ? toViewNode(d) : undefined;
  }
}
