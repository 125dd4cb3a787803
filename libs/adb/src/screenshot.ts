/** Screenshots: the raw framebuffer (`framebuffer:`) converted to RGBA, and PNG via `screencap -p`. */
import type { Screenshot } from "./types.ts";

export interface FramebufferHeader {
  bpp: number;
  size: number;
  width: number;
  height: number;
  red_offset: number;
  red_length: number;
  blue_offset: number;
  blue_length: number;
  green_offset: number;
  green_length: number;
  alpha_offset: number;
  alpha_length: number;
}

function channel(px: number, offset: number, length: number): number {
  if (length === 0) return 0;
  const v = Math.floor(px / 2 ** offset) % 2 ** length;
  return length === 8 ? v : Math.round((v * 255) / (2 ** length - 1));
}

/** Converts raw framebuffer pixels (any bpp/offset layout the header describes) into RGBA8888; RGBA8888 data is returned as is (a view, not a copy). */
export function framebufferToRgba(meta: FramebufferHeader, data: Uint8Array): Screenshot | string {
  const { width, height, bpp } = meta;
  if (!(width > 0 && height > 0)) return `framebuffer header has no size (${width}x${height})`;
  if (bpp % 8 !== 0 || bpp < 8 || bpp > 32) return `unsupported framebuffer depth ${bpp} bpp`;
  const bytes = bpp / 8;
  const n = width * height;
  if (data.byteLength < n * bytes) return `framebuffer short: ${data.byteLength} bytes for ${width}x${height}x${bytes}`;
  const standard = bpp === 32 && meta.red_offset === 0 && meta.green_offset === 8 && meta.blue_offset === 16 && meta.red_length === 8 && meta.green_length === 8 && meta.blue_length === 8;
  if (standard) {
    // Already RGBA8888: the data itself, no copy (it is the caller's own buffer).
    const rgba = data.subarray(0, n * 4);
    if (meta.alpha_length === 0) for (let i = 3; i < rgba.length; i += 4) rgba[i] = 255;
    return { width, height, rgba };
  }
  const rgba = new Uint8Array(n * 4);
  for (let i = 0; i < n; i++) {
    let px = 0;
    for (let b = bytes - 1; b >= 0; b--) px = px * 256 + data[i * bytes + b]!;
    rgba[i * 4] = channel(px, meta.red_offset, meta.red_length);
    rgba[i * 4 + 1] = channel(px, meta.green_offset, meta.green_length);
    rgba[i * 4 + 2] = channel(px, meta.blue_offset, meta.blue_length);
    rgba[i * 4 + 3] = meta.alpha_length ? channel(px, meta.alpha_offset, meta.alpha_length) : 255;
  }
  return { width, height, rgba };
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export function isPng(b: Uint8Array): boolean {
  return b.byteLength >= 8 && PNG_SIGNATURE.every((v, i) => b[i] === v);
}
