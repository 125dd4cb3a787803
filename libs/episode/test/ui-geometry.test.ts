/** Where UI actions land: element centres, x,y checks, scroll and swipe paths, the screen as shown in landscape. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { UiAction, UiElement } from "@farm/policy";
import { pointOf, scrollPath, shownSize, swipePath } from "../src/ui-geometry.ts";

const SCREEN = { width: 360, height: 640 };

function el(index: number, bounds: [number, number, number, number]): UiElement {
  return { index, class_name: "android.widget.Button", text: `e${index}`, content_description: "", hint_text: "", resource_id: "", package_name: "p", bounds, is_clickable: true, is_long_clickable: false, is_editable: false, is_scrollable: false, is_checkable: false, is_checked: false, is_focused: false, is_enabled: true, is_selected: false };
}
const ELS = [el(0, [0, 0, 100, 50]), el(1, [200, 600, 400, 700]), el(2, [-50, -50, -10, -10]), el(3, [0, 112, 360, 568])];
const ui = (a: Partial<UiAction>): UiAction => ({ action_type: "click", ...a });

test("a click by index goes to the centre of the element's visible part; index wins over x,y", () => {
  assert.deepEqual(pointOf(ui({ index: 0 }), ELS, SCREEN), { x: 50, y: 25, element: 0 });
  assert.deepEqual(pointOf(ui({ index: 1 }), ELS, SCREEN), { x: 280, y: 620, element: 1 }, "clipped to the screen first");
  assert.deepEqual(pointOf(ui({ index: 0, x: 300, y: 300 }), ELS, SCREEN), { x: 50, y: 25, element: 0 });
  assert.deepEqual(pointOf(ui({ x: 359, y: 639 }), undefined, SCREEN), { x: 359, y: 639 }, "x,y needs no element list");
});

test("the agent's mistakes are invalid with the reason: out of range, no list, off screen", () => {
  assert.match((pointOf(ui({ index: 4 }), ELS, SCREEN) as { invalid: string }).invalid, /index 4 is out of range: the screen had 4 elements \(0 to 3\)/);
  assert.match((pointOf(ui({ index: 0 }), [], SCREEN) as { invalid: string }).invalid, /index 0 is out of range: the screen had 0 elements/);
  assert.match((pointOf(ui({ index: 0 }), undefined, SCREEN) as { invalid: string }).invalid, /no element list was observed/);
  assert.match((pointOf(ui({ index: 2 }), ELS, SCREEN) as { invalid: string }).invalid, /element 2 \[-50,-50,-10,-10\] is not on the 360x640 screen/);
  assert.match((pointOf(ui({ x: 360, y: 10 }), undefined, SCREEN) as { invalid: string }).invalid, /x,y \(360, 10\) is off the 360x640 screen/);
});

test("landscape: the screen as shown is 640x360, so x 600 is on it and y 400 is not", () => {
  const shown = shownSize(SCREEN, 1);
  assert.deepEqual(shown, { width: 640, height: 360 });
  assert.deepEqual(shownSize(SCREEN, 2), SCREEN);
  assert.deepEqual(pointOf(ui({ x: 600, y: 10 }), undefined, shown), { x: 600, y: 10 });
  assert.ok("invalid" in pointOf(ui({ x: 10, y: 400 }), undefined, shown));
});

test("scroll: from the centre of the screen or the element to its edge, against the direction (down: the finger moves up)", () => {
  assert.deepEqual(scrollPath(ui({ action_type: "scroll", direction: "down" }), undefined, SCREEN), { x1: 179, y1: 319, x2: 179, y2: 0 });
  assert.deepEqual(scrollPath(ui({ action_type: "scroll", direction: "up" }), undefined, SCREEN), { x1: 179, y1: 319, x2: 179, y2: 639 });
  assert.deepEqual(scrollPath(ui({ action_type: "scroll", direction: "right" }), undefined, SCREEN), { x1: 179, y1: 319, x2: 0, y2: 319 });
  assert.deepEqual(scrollPath(ui({ action_type: "scroll", direction: "left" }), undefined, SCREEN), { x1: 179, y1: 319, x2: 359, y2: 319 });
  assert.deepEqual(scrollPath(ui({ action_type: "scroll", direction: "down", index: 3 }), ELS, SCREEN), { x1: 179, y1: 339, x2: 179, y2: 112, element: 3 });
  assert.ok("invalid" in scrollPath(ui({ action_type: "scroll", direction: "down", index: 9 }), ELS, SCREEN));
});

test("swipe: the finger moves in the direction across the middle, clear of the edges", () => {
  assert.deepEqual(swipePath("up", SCREEN), { x1: 180, y1: 512, x2: 180, y2: 128 });
  assert.deepEqual(swipePath("down", SCREEN), { x1: 180, y1: 128, x2: 180, y2: 512 });
  assert.deepEqual(swipePath("left", SCREEN), { x1: 288, y1: 320, x2: 72, y2: 320 });
  assert.deepEqual(swipePath("right", SCREEN), { x1: 72, y1: 320, x2: 288, y2: 320 });
});
