/** Draws a widget tree on the Canvas: the same tree that is hit-tested and reported. */
import { Canvas } from "../../graphics/canvas.ts";
import { GLYPH_HEIGHT } from "../../graphics/font.ts";
import type { Box, Widget } from "./widget.ts";
import { COLORS, SLIDER_INSET_DP } from "./widgets.ts";

export function paintTree(c: Canvas, w: Widget, dp: number): void {
  const p = w.paint ?? {};
  const b = w.bounds;
  if (p.bg !== undefined) fillBox(c, b, p.bg);
  if (p.spin !== undefined) return paintSpinner(c, b, p.spin);
  const scale = Math.max(1, Math.round((p.scale ?? 2) * dp));
  const fg = w.enabled === false ? COLORS.muted : (p.fg ?? COLORS.text);
  switch (p.look) {
    case "check":
      return void (paintCheck(c, w, scale, fg), paintChildren(c, w, dp));
    case "switch":
      return void (paintSwitch(c, w, scale, fg), paintChildren(c, w, dp));
    case "field":
      return void (paintField(c, w, scale), paintChildren(c, w, dp));
    case "slider":
      return void paintSlider(c, w, dp);
  }
  const text = p.glyph ?? w.text ?? "";
  if (text !== "") textIn(c, b, text, scale, fg, p.align ?? "left");
  if (p.chevron) c.text(b[2] - 10 * scale, (b[1] + b[3]) / 2 - (GLYPH_HEIGHT * scale) / 2, ">", scale, COLORS.muted);
  paintChildren(c, w, dp);
}

/** Eight dots on a ring, the one at `phase` lit: an indeterminate ProgressBar that turns as its phase does. */
function paintSpinner(c: Canvas, b: Box, phase: number): void {
  const cx = (b[0] + b[2]) / 2;
  const cy = (b[1] + b[3]) / 2;
  const r = Math.max(2, Math.min(b[2] - b[0], b[3] - b[1]) / 2 - 4);
  const dot = Math.max(1, Math.round(r / 4));
  for (let i = 0; i < 8; i++) {
    const a = (i * Math.PI) / 4;
    c.circle(Math.round(cx + r * Math.sin(a)), Math.round(cy - r * Math.cos(a)), dot, i === (((phase % 8) + 8) % 8) ? COLORS.accent : COLORS.line);
  }
}

function paintChildren(c: Canvas, w: Widget, dp: number): void {
  for (const child of w.children ?? []) paintTree(c, child, dp);
}

function fillBox(c: Canvas, b: Box, color: number): void {
  c.rect(b[0], b[1], b[2] - b[0], b[3] - b[1], color);
}

/** Text in the box, cut to what fits (the end of it when `tail`, as a field shows what is typed last). */
function textIn(c: Canvas, b: Box, text: string, scale: number, color: number, align: "left" | "center", tail = false): void {
  const pad = 4 * scale;
  const room = Math.max(0, Math.floor((b[2] - b[0] - 2 * pad + scale) / (6 * scale)));
  // The 5x7 font has no ampersand; the screen spells it out (the reported text keeps it).
  const chars = [...text.replace(/&/g, "AND")];
  const shown = chars.length <= room ? text : (tail ? chars.slice(chars.length - room) : chars.slice(0, room)).join("");
  const y = (b[1] + b[3]) / 2 - (GLYPH_HEIGHT * scale) / 2;
  if (align === "center") c.textCentered(b[0], b[1], b[2] - b[0], b[3] - b[1], shown, scale, color);
  else c.text(b[0] + pad, y, shown, scale, color);
}

function paintCheck(c: Canvas, w: Widget, scale: number, fg: number): void {
  const b = w.bounds;
  const side = Math.round((b[3] - b[1]) * 0.45);
  const x = b[0] + 4 * scale;
  const y = Math.round((b[1] + b[3] - side) / 2);
  c.rect(x, y, side, side, COLORS.accent);
  if (!w.checked) c.rect(x + 2, y + 2, side - 4, side - 4, 0xffffff);
  textIn(c, [x + side, b[1], b[2], b[3]], w.text ?? "", scale, fg, "left");
}

function paintSwitch(c: Canvas, w: Widget, scale: number, fg: number): void {
  const b = w.bounds;
  const th = Math.round((b[3] - b[1]) * 0.3);
  const tw = th * 2;
  const x = b[2] - tw - 4 * scale;
  const y = Math.round((b[1] + b[3] - th) / 2);
  c.rect(x, y, tw, th, w.checked ? 0x80cbc4 : COLORS.line);
  c.rect(w.checked ? x + th : x, y - 2, th, th + 4, w.checked ? COLORS.accent : 0x757575);
  textIn(c, [b[0], b[1], x, b[3]], w.text ?? "", scale, fg, "left");
}

function paintField(c: Canvas, w: Widget, scale: number): void {
  const b = w.bounds;
  fillBox(c, [b[0], b[3] - 2, b[2], b[3]], w.focused ? COLORS.accent : COLORS.line);
  const text = w.text ?? "";
  const shown = w.password ? ".".repeat([...text].length) : text;
  if (shown === "") textIn(c, b, w.hint ?? "", scale, COLORS.muted, "left");
  else textIn(c, b, shown, scale, COLORS.text, "left", true);
  if (w.focused) {
    const room = Math.floor((b[2] - b[0] - 8 * scale + scale) / (6 * scale));
    const x = b[0] + 4 * scale + Math.min([...shown].length, room) * 6 * scale;
    c.rect(x, (b[1] + b[3]) / 2 - 5 * scale, Math.max(1, scale / 2), 10 * scale, COLORS.accent);
  }
}

function paintSlider(c: Canvas, w: Widget, dp: number): void {
  const b = w.bounds;
  const inset = Math.round(SLIDER_INSET_DP * dp);
  const mid = Math.round((b[1] + b[3]) / 2);
  const width = b[2] - b[0] - 2 * inset;
  const x = b[0] + inset + Math.round(Math.min(1, Math.max(0, w.paint?.fraction ?? 0)) * width);
  c.rect(b[0] + inset, mid - 2, width, 4, COLORS.line);
  c.rect(b[0] + inset, mid - 2, x - b[0] - inset, 4, COLORS.accent);
  const knob = Math.round(8 * dp);
  c.rect(x - knob, mid - knob, 2 * knob, 2 * knob, COLORS.accent);
}
