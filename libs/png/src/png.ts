/**
 * A minimal PNG encoder for 8-bit RGB and RGBA pixels (no filtering, no interlace), built on node:zlib
 * (deflate and crc32) so the farm needs no image dependency.
 */
import { crc32, deflateSync } from "node:zlib";

export interface PngOptions {
  /** zlib deflate level, 0…9 (or -1 for zlib's default). Default 1: fastest, and good for flat UI colours. */
  level?: number;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, "latin1");
  out.set(data, 8);
  // The CRC covers the type and the data, not the length.
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)) >>> 0, 8 + data.length);
  return out;
}

function encode(width: number, height: number, pixels: Uint8Array, channels: 3 | 4, opts: PngOptions): Buffer {
  if (pixels.length !== width * height * channels) {
    throw new Error(`${channels === 3 ? "RGB" : "RGBA"} pixels: expected ${width}×${height}×${channels} = ${width * height * channels} bytes, got ${pixels.length}`);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = channels === 3 ? 2 : 6; // colour type: RGB or RGBA
  // compression, filter and interlace methods stay 0
  const stride = width * channels;
  const raw = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (stride + 1)] = 0; // filter type "none" for every row
    raw.set(pixels.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  }
  const idat = deflateSync(raw, { level: opts.level ?? 1 });
  return Buffer.concat([SIGNATURE, chunk("IHDR", header), chunk("IDAT", idat), chunk("IEND", new Uint8Array(0))]);
}

/** PNG of `width`×`height` RGB pixels (row-major, 3 bytes each). */
export function encodeRgbPng(width: number, height: number, rgb: Uint8Array, opts: PngOptions = {}): Buffer {
  return encode(width, height, rgb, 3, opts);
}

/** PNG of `width`×`height` RGBA pixels (row-major, 4 bytes each, e.g. RGBA8888 frames). */
export function encodeRgbaPng(width: number, height: number, rgba: Uint8Array, opts: PngOptions = {}): Buffer {
  return encode(width, height, rgba, 4, opts);
}
