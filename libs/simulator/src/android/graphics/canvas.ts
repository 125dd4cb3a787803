/** A minimal RGBA drawing surface for the simulated screens: filled rectangles, circles and 5x7 text. */
import { GLYPH_HEIGHT, GLYPH_WIDTH, glyphRows } from "./font.ts";

/** 0xRRGGBB */
export type Color = number;

export class Canvas {
  readonly rgba: Uint8Array;

  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    this.rgba = new Uint8Array(width * height * 4);
  }

  fill(color: Color): void {
    this.rect(0, 0, this.width, this.height, color);
  }

  rect(x: number, y: number, w: number, h: number, color: Color): void {
    const x0 = Math.max(0, Math.round(x));
    const y0 = Math.max(0, Math.round(y));
    const x1 = Math.min(this.width, Math.round(x + w));
    const y1 = Math.min(this.height, Math.round(y + h));
    if (x1 <= x0 || y1 <= y0) return;
    const r = (color >> 16) & 0xff;
    const g = (color >> 8) & 0xff;
    const b = color & 0xff;
    // Paint one row, then copy it down: much cheaper than per-pixel writes for large areas.
    const rowStart = (y0 * this.width + x0) * 4;
    const rowEnd = (y0 * this.width + x1) * 4;
    for (let i = rowStart; i < rowEnd; i += 4) {
      this.rgba[i] = r;
      this.rgba[i + 1] = g;
      this.rgba[i + 2] = b;
      this.rgba[i + 3] = 255;
    }
    for (let y = y0 + 1; y < y1; y++) this.rgba.copyWithin((y * this.width + x0) * 4, rowStart, rowEnd);
  }

  circle(cx: number, cy: number, radius: number, color: Color): void {
    const r = Math.max(1, Math.round(radius));
    for (let dy = -r; dy <= r; dy++) {
      const half = Math.floor(Math.sqrt(r * r - dy * dy));
      this.rect(cx - half, cy + dy, half * 2 + 1, 1, color);
    }
  }

  /** Width in pixels of `text` at `scale`. */
  static textWidth(text: string, scale: number): number {
    return text.length === 0 ? 0 : (text.length * (GLYPH_WIDTH + 1) - 1) * scale;
  }

  text(x: number, y: number, text: string, scale: number, color: Color): void {
    let cx = Math.round(x);
    for (const ch of text) {
      const rows = glyphRows(ch);
      for (let row = 0; row < GLYPH_HEIGHT; row++) {
        const bits = rows[row]!;
        for (let col = 0; col < GLYPH_WIDTH; col++) {
          if (bits & (1 << (GLYPH_WIDTH - 1 - col))) this.rect(cx + col * scale, y + row * scale, scale, scale, color);
        }
      }
      cx += (GLYPH_WIDTH + 1) * scale;
    }
  }

  /** Text centred in the box (x, y, w, h). */
  textCentered(x: number, y: number, w: number, h: number, text: string, scale: number, color: Color): void {
    this.text(x + (w - Canvas.textWidth(text, scale)) / 2, y + (h - GLYPH_HEIGHT * scale) / 2, text, scale, color);
  }
}
