/**
 * A minimal RGBA drawing surface for the simulated screens: filled rectangles, circles and 5x7 text.
 * Drawing records a display list (every shape is rectangles); the pixels are rasterized when read, and
 * only when the list differs from the one last rasterized, as Android redraws a view only when its
 * display list changed. A screen that did not change costs a screenshot no drawing at all.
 */
import { GLYPH_HEIGHT, GLYPH_WIDTH, glyphRows } from "./font.ts";

/** 0xRRGGBB */
export type Color = number;

/** Per recorded rectangle: x0, y0, x1, y1 (clipped, end exclusive) and the pixel as a little-endian RGBA word. */
const OP_INTS = 5;
const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
/** Every rasterization gets a new number, unique across surfaces: equal versions mean equal pixels. */
let nextVersion = 1;

export class Canvas {
  private readonly pixels: Uint8Array;
  private ops: Int32Array = new Int32Array(256 * OP_INTS);
  private count = 0;
  private drawn: Int32Array = new Int32Array(0);
  private drawnCount = -1;
  private rasterVersion = 0;

  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    this.pixels = new Uint8Array(width * height * 4);
  }

  /** Starts a new frame: what is drawn from now on replaces the previous frame (which was cleared to 0 first). */
  begin(): void {
    this.count = 0;
  }

  /** The frame's pixels, RGBA; rasterized now if the drawing changed since they were last read. */
  get rgba(): Uint8Array {
    if (!this.sameAsDrawn()) this.rasterize();
    return this.pixels;
  }

  /** Identifies the current pixels: two reads with the same version have the same bytes. */
  get version(): number {
    if (!this.sameAsDrawn()) this.rasterize();
    return this.rasterVersion;
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
    if ((this.count + 1) * OP_INTS > this.ops.length) this.ops = grow(this.ops, this.ops.length * 2);
    const o = this.count++ * OP_INTS;
    this.ops[o] = x0;
    this.ops[o + 1] = y0;
    this.ops[o + 2] = x1;
    this.ops[o + 3] = y1;
    this.ops[o + 4] = pixelWord(color);
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

  private sameAsDrawn(): boolean {
    if (this.count !== this.drawnCount) return false;
    const n = this.count * OP_INTS;
    for (let i = 0; i < n; i++) if (this.ops[i] !== this.drawn[i]) return false;
    return true;
  }

  private rasterize(): void {
    const words = new Uint32Array(this.pixels.buffer, this.pixels.byteOffset, this.width * this.height);
    const ops = this.ops;
    const n = this.count * OP_INTS;
    // A first shape over the whole surface (an app's background) makes the clear needless.
    const coversAll = n > 0 && ops[0] === 0 && ops[1] === 0 && ops[2] === this.width && ops[3] === this.height;
    if (!coversAll) words.fill(0);
    for (let o = 0; o < n; o += OP_INTS) {
      const x0 = ops[o]!, y0 = ops[o + 1]!, x1 = ops[o + 2]!, y1 = ops[o + 3]!;
      const word = ops[o + 4]! >>> 0;
      const rowStart = y0 * this.width + x0;
      words.fill(word, rowStart, rowStart + (x1 - x0));
      // Copy the painted row down: cheaper than filling every row for large areas.
      for (let y = y0 + 1; y < y1; y++) words.copyWithin(y * this.width + x0, rowStart, rowStart + (x1 - x0));
    }
    if (this.drawn.length < n) this.drawn = new Int32Array(this.ops.length);
    this.drawn.set(ops.subarray(0, n));
    this.drawnCount = this.count;
    this.rasterVersion = nextVersion++;
  }
}

/** An opaque 0xRRGGBB as the 32-bit word whose bytes in memory are R, G, B, 255. */
function pixelWord(color: Color): number {
  const r = (color >> 16) & 0xff;
  const g = (color >> 8) & 0xff;
  const b = color & 0xff;
  return littleEndian ? ((255 << 24) | (b << 16) | (g << 8) | r) : ((r << 24) | (g << 16) | (b << 8) | 255);
}

function grow(a: Int32Array, length: number): Int32Array {
  const out = new Int32Array(length);
  out.set(a);
  return out;
}
