/**
 * Time on screen for the toolkit's apps (issue 36): what an input changed (the page, a dialog, the
 * keyboard, a fling over a list, a list that loads) runs as a transition over the profile's timings
 * (AppHost.motionTimings) instead of at once. Everything here is plain data kept in an app field
 * (device snapshots copy app fields) and computed from the device clock, so a frame or a tree taken
 * at any moment shows the state of that moment. Hit-testing uses the final layout: touches go to the
 * window where it ends up (as Android's input dispatch uses window frames, not the animation).
 */
import type { Box, Widget } from "./widget.ts";

/** A transition from `from` to `until` (device clock, ms). */
export interface Span {
  from: number;
  until: number;
}

/** A fling: the list keeps scrolling by whole rows, decelerating, after the finger lifted. */
export interface Fling extends Span {
  /** Key of the scrollable widget. */
  key: string;
  /** Where the finger went down (natural frame): the scrollable's position for its scroll events. */
  x: number;
  y: number;
  /** Pixels the fling travels in all (> 0: towards later rows). */
  total: number;
  /** Pixels applied so far (whole rows), and those not yet reported to accessibility. */
  done: number;
  unreported: number;
  rowPx: number;
  /** When the list hit its end (an edge glow fades out until `until`). */
  stoppedAt: number | undefined;
}

export interface MotionState {
  /** Set at the first look: the app's first page was seen (a slow list then starts loading). */
  started: boolean;
  pageIn: Span | undefined;
  dialogIn: Span | undefined;
  /** A dismissed dialog falls out of sight (drawn only: its window is gone from accessibility at once). */
  dialogOut: (Span & { widget: Widget }) | undefined;
  keyboard: (Span & { shown: boolean }) | undefined;
  fling: Fling | undefined;
  /** A slow list's contents appear at `until`; -1: never (a test's spinner that never stops). */
  load: Span | undefined;
}

export function noMotion(): MotionState {
  return { started: false, pageIn: undefined, dialogIn: undefined, dialogOut: undefined, keyboard: undefined, fling: undefined, load: undefined };
}

/** Progress 0..1 of a span at `now`, decelerating (Android's DecelerateInterpolator, factor 1). */
export function eased(s: Span, now: number): number {
  if (s.until <= s.from || now >= s.until) return 1;
  const p = Math.max(0, (now - s.from) / (s.until - s.from));
  return 1 - (1 - p) * (1 - p);
}

export function running(s: Span | undefined, now: number): boolean {
  return s !== undefined && (s.until < 0 || now < s.until);
}

/** Whether anything still moves at `now` (the app then ticks). */
export function moving(m: MotionState, now: number): boolean {
  return running(m.pageIn, now) || running(m.dialogIn, now) || running(m.dialogOut, now) || running(m.keyboard, now) || m.fling !== undefined || running(m.load, now);
}

/** The widget moved by (dx, dy), clipped to `clip` (what is off screen has no area, as accessibility's visible bounds). */
export function offset(w: Widget, dx: number, dy: number, clip: Box): Widget {
  const b = w.bounds;
  const cx = (v: number): number => Math.min(clip[2], Math.max(clip[0], Math.round(v + dx)));
  const cy = (v: number): number => Math.min(clip[3], Math.max(clip[1], Math.round(v + dy)));
  return Object.assign({}, w, { bounds: [cx(b[0]), cy(b[1]), cx(b[2]), cy(b[3])] as Box, children: w.children?.map((c) => offset(c, dx, dy, clip)) });
}

/** The widget as plain data (no handlers): what a field may hold. */
export function strip(w: Widget): Widget {
  const { on: _on, children, ...rest } = w;
  return children ? Object.assign(rest, { children: children.map(strip) }) : rest;
}

/** Replaces every widget `pick` accepts by what `fn` makes of it. */
export function mapWidgets(w: Widget, pick: (w: Widget) => boolean, fn: (w: Widget) => Widget): Widget {
  if (pick(w)) return fn(w);
  return w.children ? Object.assign({}, w, { children: w.children.map((c) => mapWidgets(c, pick, fn)) }) : w;
}

/** How far a fling has travelled at `now` (pixels). */
export function flingTravel(f: Fling, now: number): number {
  return f.total * eased(f, now);
}

/** A spinner (indeterminate ProgressBar) in the middle of `box`; `phase` is what its drawing shows now. */
export function spinner(key: string, box: Box, size: number, phase: number): Widget {
  const cx = Math.round((box[0] + box[2]) / 2);
  const cy = Math.round((box[1] + box[3]) / 2);
  const half = Math.round(size / 2);
  return { cls: "android.widget.ProgressBar", key, id: "android:id/progress", bounds: [cx - half, cy - half, cx + half, cy + half], paint: { spin: phase } };
}

/** Rows of a scrollable list: its first child's height (0 when it shows none). */
export function rowHeightOf(w: Widget): number {
  const c = w.children?.[0];
  return c ? c.bounds[3] - c.bounds[1] : 0;
}
