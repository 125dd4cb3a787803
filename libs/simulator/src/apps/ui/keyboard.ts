/**
 * The on-screen keyboard shown while a text field is focused, so an agent that only touches can type.
 * Its keys are clickable views (text = what the key types; content description names the special keys).
 */
import type { Box, Widget } from "./widget.ts";
import { panel } from "./widgets.ts";

export const KEY_ROWS = ["1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm"] as const;
/** Rows of keys, then the row of space / enter. */
export const KEYBOARD_ROWS = KEY_ROWS.length + 1;

export type KeyPress = { type: "char"; ch: string } | { type: "del" } | { type: "enter" };

function key(k: string, bounds: Box, text: string, desc: string, press: () => void): Widget {
  return {
    cls: "android.inputmethodservice.Keyboard$Key",
    key: `key/${k}`,
    bounds,
    text,
    desc,
    clickable: true,
    on: { click: press },
    paint: { bg: 0xeceff1, fg: 0x263238, align: "center", look: "text", scale: 2 },
  };
}

/** The keyboard in `bounds` (full width, KEYBOARD_ROWS rows of keys). */
export function keyboard(bounds: Box, press: (k: KeyPress) => void): Widget {
  const [l, t, r, b] = bounds;
  const rowH = (b - t) / KEYBOARD_ROWS;
  const keyW = (r - l) / 10;
  const gap = 2;
  const box = (x0: number, x1: number, row: number): Box => [Math.round(x0) + gap, Math.round(t + row * rowH) + gap, Math.round(x1) - gap, Math.round(t + (row + 1) * rowH) - gap];
  const keys: Widget[] = [];
  KEY_ROWS.forEach((chars, row) => {
    const x0 = l + ((10 - chars.length) * keyW) / 2 - (row === 3 ? keyW : 0);
    [...chars].forEach((ch, i) => keys.push(key(ch, box(x0 + i * keyW, x0 + (i + 1) * keyW, row), ch, ch, () => press({ type: "char", ch }))));
  });
  keys.push(key("del", box(l + 7.5 * keyW, r, 3), "DEL", "Delete", () => press({ type: "del" })));
  const last = KEY_ROWS.length;
  keys.push(key(".", box(l, l + keyW, last), ".", ".", () => press({ type: "char", ch: "." })));
  keys.push(key("-", box(l + keyW, l + 2 * keyW, last), "-", "-", () => press({ type: "char", ch: "-" })));
  keys.push(key("space", box(l + 2 * keyW, l + 7.5 * keyW, last), "", "Space", () => press({ type: "char", ch: " " })));
  keys.push(key("enter", box(l + 7.5 * keyW, r, last), "OK", "Enter", () => press({ type: "enter" })));
  return panel("keyboard", bounds, keys, { id: "app:id/keyboard", cls: "android.inputmethodservice.KeyboardView", paint: { bg: 0xcfd8dc } });
}
