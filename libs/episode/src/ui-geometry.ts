/**
 * Where a UI action lands on the screen: an element's centre or x,y (checked against the screen as shown), and the
 * finger paths of scroll and swipe. Pure; an agent's mistake comes back as `{invalid}` with the reason.
 */
import { shownScreenSize, type ScrollDirection, type UiAction, type UiElement } from "@farm/policy";

export type Size = { width: number; height: number };
export type Point = { x: number; y: number; element?: number };
export type Path = { x1: number; y1: number; x2: number; y2: number; element?: number };
export type Invalid = { invalid: string };

/** The screen as shown: width and height swap in landscape (orientation 1 and 3); element bounds use this frame (@farm/policy's, the one the llm prompt states). */
export const shownSize: (natural: Size, orientation?: 0 | 1 | 2 | 3) => Size = shownScreenSize;

/** The element `index` points at, or why it cannot be used. */
export function elementAt(index: number, elements: readonly UiElement[] | undefined): UiElement | Invalid {
  if (!elements) return { invalid: `index ${index}: no element list was observed for this step (the policy must set needsElements, and the screen must be readable as a tree); give x and y instead` };
  const e = elements[index];
  if (!e) return { invalid: `index ${index} is out of range: the screen had ${elements.length} element${elements.length === 1 ? "" : "s"} (0 to ${elements.length - 1})` };
  return e;
}

/** The element's bounds clipped to the screen, or why it has no visible part. */
function visibleBox(e: UiElement, size: Size): [number, number, number, number] | Invalid {
  const [l, t, r, b] = e.bounds;
  const box: [number, number, number, number] = [Math.max(l, 0), Math.max(t, 0), Math.min(r, size.width), Math.min(b, size.height)];
  if (box[2] <= box[0] || box[3] <= box[1]) return { invalid: `element ${e.index} [${e.bounds.join(",")}] is not on the ${size.width}x${size.height} screen` };
  return box;
}

/** Where a click, double tap, long press or focusing tap goes: the element's centre (index wins) or x,y. */
export function pointOf(ui: UiAction, elements: readonly UiElement[] | undefined, size: Size): Point | Invalid {
  if (ui.index !== undefined) {
    const e = elementAt(ui.index, elements);
    if ("invalid" in e) return e;
    const box = visibleBox(e, size);
    if ("invalid" in box) return box;
    return { x: Math.trunc((box[0] + box[2]) / 2), y: Math.trunc((box[1] + box[3]) / 2), element: e.index };
  }
  if (ui.x === undefined || ui.y === undefined) return { invalid: `${ui.action_type} needs an index or both x and y` };
  if (ui.x >= size.width || ui.y >= size.height) return { invalid: `x,y (${ui.x}, ${ui.y}) is off the ${size.width}x${size.height} screen` };
  return { x: ui.x, y: ui.y };
}

/**
 * A scroll of the screen, or of element `index`: from the centre of the region to its edge, against the direction
 * (AndroidWorld's convention: scroll "down" shows what is below, so the finger moves up).
 */
export function scrollPath(ui: UiAction, elements: readonly UiElement[] | undefined, size: Size): Path | Invalid {
  let box: [number, number, number, number] = [0, 0, size.width, size.height];
  let element: number | undefined;
  if (ui.index !== undefined) {
    const e = elementAt(ui.index, elements);
    if ("invalid" in e) return e;
    const b = visibleBox(e, size);
    if ("invalid" in b) return b;
    box = b;
    element = e.index;
  }
  const [l, t, r, b] = [box[0], box[1], box[2] - 1, box[3] - 1];
  const cx = Math.trunc((l + r) / 2);
  const cy = Math.trunc((t + b) / 2);
  const [x2, y2] = scrollEnd(ui.direction ?? "down", { l, t, r, b, cx, cy });
  return { x1: cx, y1: cy, x2, y2, ...(element !== undefined ? { element } : {}) };
}

function scrollEnd(d: ScrollDirection, p: { l: number; t: number; r: number; b: number; cx: number; cy: number }): [number, number] {
  switch (d) {
    case "down":
      return [p.cx, p.t];
    case "up":
      return [p.cx, p.b];
    case "right":
      return [p.l, p.cy];
    case "left":
      return [p.r, p.cy];
  }
}

/** Fraction of the screen kept clear at the edges, where real devices take system gestures (shade, home, back). */
const EDGE = 0.2;

/** A swipe across the screen's middle: the finger moves in `direction`, from 20% to 80% of the way (edges left alone). */
export function swipePath(direction: ScrollDirection, size: Size): Path {
  const cx = Math.trunc(size.width / 2);
  const cy = Math.trunc(size.height / 2);
  const near = (n: number) => Math.trunc(n * EDGE);
  const far = (n: number) => Math.trunc(n * (1 - EDGE));
  switch (direction) {
    case "up":
      return { x1: cx, y1: far(size.height), x2: cx, y2: near(size.height) };
    case "down":
      return { x1: cx, y1: near(size.height), x2: cx, y2: far(size.height) };
    case "left":
      return { x1: far(size.width), y1: cy, x2: near(size.width), y2: cy };
    case "right":
      return { x1: near(size.width), y1: cy, x2: far(size.width), y2: cy };
  }
}
