/** Widget constructors: each returns the one tree node that is drawn, hit-tested and reported. */
import type { Box, Handlers, Paint, Widget } from "./widget.ts";

export const COLORS = { bar: 0x00796b, barText: 0xffffff, page: 0xffffff, text: 0x212121, muted: 0x9e9e9e, accent: 0x00897b, row: 0xf5f5f5, danger: 0xd32f2f, line: 0xbdbdbd } as const;

interface Common {
  id?: string;
  desc?: string;
  enabled?: boolean;
  paint?: Paint;
}

export function panel(key: string, bounds: Box, children: Widget[], opts: Common & { cls?: string } = {}): Widget {
  return { cls: opts.cls ?? "android.widget.LinearLayout", key, id: opts.id, bounds, desc: opts.desc, children, paint: opts.paint };
}

export function label(key: string, bounds: Box, text: string, opts: Common = {}): Widget {
  return { cls: "android.widget.TextView", key, id: opts.id, bounds, text, desc: opts.desc, paint: { look: "text", ...opts.paint } };
}

/** A titled app bar; with `up`, an Up button (content description "Navigate up") at its left. */
export function appBar(bounds: Box, title: string, up?: () => void): Widget {
  const h = bounds[3] - bounds[1];
  const children: Widget[] = [];
  if (up) children.push(Object.assign(iconButton("up", [bounds[0], bounds[1], bounds[0] + h, bounds[3]], "<", "Navigate up", up), { paint: { fg: COLORS.barText, scale: 3, look: "text", align: "center", glyph: "<" } as const }));
  children.push(label("toolbar_title", [bounds[0] + (up ? h : Math.round(h / 4)), bounds[1], bounds[2], bounds[3]], title, { id: "app:id/toolbar_title", paint: { fg: COLORS.barText, scale: 2 } }));
  return panel("toolbar", bounds, children, { id: "app:id/toolbar", cls: "android.view.ViewGroup", paint: { bg: COLORS.bar } });
}

export function button(key: string, bounds: Box, text: string, click: () => void, opts: Common = {}): Widget {
  return {
    cls: "android.widget.Button",
    key,
    id: opts.id,
    bounds,
    text,
    desc: opts.desc,
    clickable: true,
    focusable: true,
    enabled: opts.enabled,
    on: { click },
    paint: { bg: opts.enabled === false ? COLORS.line : COLORS.accent, fg: 0xffffff, align: "center", look: "text", ...opts.paint },
  };
}

/** A button with a glyph and no text: what it does is in its content description, as on Android. */
export function iconButton(key: string, bounds: Box, glyph: string, desc: string, click: () => void, opts: Common = {}): Widget {
  return Object.assign(button(key, bounds, "", click, Object.assign({}, opts, { desc })), { cls: "android.widget.ImageButton" as const, paint: { fg: COLORS.text, align: "center", look: "text", glyph, ...opts.paint } });
}

function toggle(cls: string, look: "check" | "switch", key: string, bounds: Box, text: string, checked: boolean, flip: () => void, opts: Common): Widget {
  return { cls, key, id: opts.id, bounds, text, desc: opts.desc, checkable: true, checked, clickable: true, focusable: true, enabled: opts.enabled, on: { click: flip }, paint: { look, fg: COLORS.text, ...opts.paint } };
}

export function checkbox(key: string, bounds: Box, text: string, checked: boolean, flip: () => void, opts: Common = {}): Widget {
  return toggle("android.widget.CheckBox", "check", key, bounds, text, checked, flip, opts);
}

export function switchView(key: string, bounds: Box, text: string, checked: boolean, flip: () => void, opts: Common = {}): Widget {
  return toggle("android.widget.Switch", "switch", key, bounds, text, checked, flip, opts);
}

/** A clickable row that opens something (a list item, a settings entry with a second screen). */
export function row(key: string, bounds: Box, text: string, click: () => void, opts: Common & { longClick?: () => void; selected?: boolean } = {}): Widget {
  return {
    cls: "android.widget.TextView",
    key,
    id: opts.id,
    bounds,
    text,
    desc: opts.desc,
    clickable: true,
    focusable: true,
    longClickable: opts.longClick !== undefined,
    selected: opts.selected,
    on: { click, longClick: opts.longClick },
    paint: { look: "text", fg: COLORS.text, ...opts.paint },
  };
}

export interface FieldSpec extends Common {
  text: string;
  hint: string;
  focused: boolean;
  password?: boolean;
  /** Tap or ACTION_FOCUS: the app focuses the field (its keyboard comes up). */
  focus: () => void;
  setText: (text: string) => void;
  submit?: () => void;
}

export function textField(key: string, bounds: Box, f: FieldSpec): Widget {
  // A long press on a field focuses it too (it would also start a selection on a device).
  const on: Handlers = { click: f.focus, longClick: f.focus, setText: f.setText, submit: f.submit };
  return {
    cls: "android.widget.EditText",
    key,
    id: f.id,
    bounds,
    text: f.text,
    hint: f.hint,
    desc: f.desc,
    editable: true,
    focusable: true,
    focused: f.focused,
    clickable: true,
    longClickable: true,
    password: f.password,
    // The cursor sits at the end of the text.
    selection: [f.text.length, f.text.length],
    on,
    paint: { look: "field", fg: COLORS.text, ...f.paint },
  };
}

/**
 * A vertical list that scrolls by whole rows (`first` is the top row's index). Rows off screen are not
 * in the tree, as a RecyclerView holds only the rows it shows.
 */
export function list(key: string, bounds: Box, rowHeight: number, count: number, first: number, makeRow: (i: number, box: Box) => Widget, scroll: (first: number) => void, opts: Common = {}): Widget {
  const fit = Math.max(1, Math.floor((bounds[3] - bounds[1]) / rowHeight));
  const maxFirst = Math.max(0, count - fit);
  const top = Math.min(Math.max(0, first), maxFirst);
  const children: Widget[] = [];
  for (let i = top; i < Math.min(count, top + fit); i++) {
    const y = bounds[1] + (i - top) * rowHeight;
    children.push(makeRow(i, [bounds[0], y, bounds[2], y + rowHeight]));
  }
  const moveBy = (rows: number): boolean => {
    const next = Math.min(Math.max(0, top + rows), maxFirst);
    if (next === top) return false;
    scroll(next);
    return true;
  };
  // The accessibility scroll moves by a page, a swipe by the rows the finger travelled.
  const on: Handlers = { scroll: (dir) => moveBy(dir * fit), drag: (dy) => moveBy(Math.sign(dy) * Math.max(1, Math.round(Math.abs(dy) / rowHeight))) };
  return { cls: "androidx.recyclerview.widget.RecyclerView", key, id: opts.id, bounds, desc: opts.desc, scrollable: maxFirst > 0, focusable: maxFirst > 0, children, on, paint: opts.paint };
}

/** Rows a list shows at once (what one scroll step moves by). */
export function rowsThatFit(bounds: Box, rowHeight: number): number {
  return Math.max(1, Math.floor((bounds[3] - bounds[1]) / rowHeight));
}

/** Inset of a slider's track from its bounds (a touch within it of an end sets that end's value). */
export const SLIDER_INSET_DP = 16;

/**
 * A horizontal slider (SeekBar) over the integers [min, max]: a tap on it, or a swipe that starts on it,
 * sets the value where the finger is (or ends) along its track; the accessibility scroll moves it by `step`.
 */
export function slider(key: string, bounds: Box, value: number, range: { min: number; max: number; step: number }, set: (v: number) => void, opts: Common & { dp: number }): Widget {
  const inset = Math.round(SLIDER_INSET_DP * opts.dp);
  const [l, , r] = bounds;
  const clamp = (v: number): number => Math.min(range.max, Math.max(range.min, Math.round(v)));
  const fraction = range.max > range.min ? (value - range.min) / (range.max - range.min) : 0;
  const slideTo = (x: number): void => {
    const f = Math.min(1, Math.max(0, (x - (l + inset)) / Math.max(1, r - l - 2 * inset)));
    set(clamp(range.min + f * (range.max - range.min)));
  };
  const on: Handlers = {
    slideTo,
    scroll: (dir) => {
      const next = clamp(value + dir * range.step);
      if (next === value) return false;
      set(next);
      return true;
    },
  };
  return { cls: "android.widget.SeekBar", key, id: opts.id, bounds, desc: opts.desc, clickable: true, focusable: true, scrollable: true, enabled: opts.enabled, on, paint: { look: "slider", fraction, ...opts.paint } };
}
