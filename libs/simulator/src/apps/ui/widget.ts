/**
 * The toolkit's one tree: each widget is the view accessibility reports (a ViewNode's fields), how it
 * is painted, and what it does. Drawing, hit-testing and the reported tree all walk this same tree,
 * so what the tree calls a button at some bounds is exactly what a tap there presses.
 * Trees are rebuilt from the app's plain state on every use; they are never stored in app fields
 * (device snapshots copy app fields as plain data). Keys are unique within an app's tree: they are
 * what SimApp.onViewAction names.
 */
import type { ViewAction, ViewNode } from "../../android/app-contract.ts";

export type Box = [number, number, number, number]; // left, top, right, bottom (natural frame)

export interface Handlers {
  click?(): void;
  longClick?(): void;
  /** +1 forward (later items), -1 backward; false when already at that end. */
  scroll?(dir: 1 | -1): boolean;
  /** A swipe over a scrollable view by `dy` pixels upwards (> 0 shows later rows). */
  drag?(dy: number): boolean;
  /** A text field's content replaced (typing, DEL, the clear button, ACTION_SET_TEXT). */
  setText?(text: string): void;
  /** KEYCODE_ENTER (or the keyboard's enter key) in a focused field. */
  submit?(): void;
  /** A slider's touch at screen x (a tap on its track, or where a swipe that began on it ended). */
  slideTo?(x: number): void;
}

export interface Paint {
  bg?: number;
  fg?: number;
  /** Text scale in font pixels (1 = 5x7). */
  scale?: number;
  align?: "left" | "center";
  /** How the view's state is drawn beside its text. */
  look?: "text" | "check" | "switch" | "field" | "slider";
  /** A slider's position, 0..1 of its track. */
  fraction?: number;
  /** A `>` at the right: the row opens another screen (drawn, not reported). */
  chevron?: boolean;
  /** An icon button's glyph (drawn, not reported). */
  glyph?: string;
  /** A spinner's phase 0..7: which of its dots is lit (drawn, not reported; motion.ts). */
  spin?: number;
}

export interface Widget extends Omit<ViewNode, "children"> {
  children?: Widget[];
  on?: Handlers;
  paint?: Paint;
}

export function inside(b: Box | readonly number[], x: number, y: number): boolean {
  return x >= b[0]! && x < b[2]! && y >= b[1]! && y < b[3]!;
}

/** The reported view: the widget without its handlers and paint. */
export function toViewNode(w: Widget): ViewNode {
  const { children, on: _on, paint: _paint, ...view } = w;
  // Assigned onto the fresh rest object: a spread-first literal that adds a key costs ~1-4 µs on Node 20, per node.
  return children && children.length > 0 ? Object.assign(view, { children: children.map(toViewNode) }) : view;
}

/** Pre-order walk (a node before its children, children in order: the later drawn is on top). */
export function* walk(w: Widget): Generator<Widget> {
  yield w;
  for (const c of w.children ?? []) yield* walk(c);
}

/** The topmost enabled widget at (x, y) that `pick` accepts: the last in drawing order, as accessibility's nodeAt. */
export function widgetAt(root: Widget, x: number, y: number, pick: (w: Widget) => boolean): Widget | undefined {
  let found: Widget | undefined;
  for (const w of walk(root)) if (inside(w.bounds, x, y) && w.enabled !== false && pick(w)) found = w;
  return found;
}

export function findKey(root: Widget, key: string): Widget | undefined {
  for (const w of walk(root)) if ((w.key ?? w.id) === key) return w;
  return undefined;
}

/** An accessibility action on the widget whose key is `key`; true when carried out. */
export function performAction(root: Widget, key: string, action: ViewAction, text?: string): boolean {
  const w = findKey(root, key);
  if (!w || w.enabled === false) return false;
  const on = w.on ?? {};
  switch (action) {
    case "click":
      return w.clickable === true && call(on.click);
    case "long_click":
      return w.longClickable === true && call(on.longClick);
    case "scroll_forward":
      return w.scrollable === true && !!on.scroll?.(1);
    case "scroll_backward":
      return w.scrollable === true && !!on.scroll?.(-1);
    case "set_text":
      return w.editable === true && text !== undefined && call(on.setText ? () => on.setText!(text) : undefined);
    case "focus":
      // Focusing a field is what a tap on it does (the keyboard comes up); other views take focus
      // without doing anything (the toolkit keeps no focus of its own for them).
      if (w.focusable !== true) return false;
      return w.editable === true ? call(on.click) : true;
  }
}

function call(fn: (() => void) | undefined): boolean {
  if (!fn) return false;
  fn();
  return true;
}
