import assert from "node:assert/strict";
import { test } from "node:test";
import { crc32, inflateSync } from "node:zlib";
import { encodeRgbaPng, encodeRgbPng } from "@farm/png";

interface Chunk {
  type: string;
  data: Buffer;
}

/** Splits a PNG into chunks, checking the signature and every chunk's CRC. */
function chunks(png: Buffer): Chunk[] {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const out: Chunk[] = [];
  for (let at = 8; at < png.length; ) {
    const len = png.readUInt32BE(at);
    const type = png.subarray(at + 4, at + 8).toString("latin1");
    const data = png.subarray(at + 8, at + 8 + len);
    assert.equal(png.readUInt32BE(at + 8 + len), crc32(png.subarray(at + 4, at + 8 + len)) >>> 0, `CRC of ${type}`);
    out.push({ type, data });
    at += 12 + len;
  }
  return out;
}

/** The pixel bytes back: inflate IDAT and drop each row's filter byte (always 0 = none). */
function decode(png: Buffer): { width: number; height: number; colourType: number; pixels: Buffer } {
  const cs = chunks(png);
  assert.deepEqual(cs.map((c) => c.type), ["IHDR", "IDAT", "IEND"]);
  const ihdr = cs[0]!.data;
  const width = ihdr.readUInt32BE(0);
  const height = ihdr.readUInt32BE(4);
  assert.equal(ihdr[8], 8, "bit depth");
  const colourType = ihdr[9]!;
  const channels = colourType === 6 ? 4 : 3;
  const raw = inflateSync(cs[1]!.data);
  const stride = width * channels;
  assert.equal(raw.length, (stride + 1) * height);
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    assert.equal(raw[y * (stride + 1)], 0, "filter none");
    rows.push(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
  }
  return { width, height, colourType, pixels: Buffer.concat(rows) };
}

test("RGB: a valid PNG that holds exactly the pixels", () => {
  const rgb = Uint8Array.from({ length: 7 * 5 * 3 }, (_, i) => (i * 37) & 255);
  const d = decode(encodeRgbPng(7, 5, rgb));
  assert.deepEqual([d.width, d.height, d.colourType], [7, 5, 2]);
  assert.deepEqual(new Uint8Array(d.pixels), rgb);
});

test("RGBA: a valid PNG that holds exactly the pixels, also at another deflate level", () => {
  const rgba = Uint8Array.from({ length: 9 * 4 * 4 }, (_, i) => (i * 13) & 255);
  for (const level of [undefined, 9, -1]) {
    const d = decode(encodeRgbaPng(9, 4, rgba, { level }));
    assert.deepEqual([d.width, d.height, d.colourType], [9, 4, 6]);
    assert.deepEqual(new Uint8Array(d.pixels), rgba);
  }
});

test("a pixel buffer of the wrong size is rejected", () => {
  assert.throws(() => encodeRgbPng(2, 2, new Uint8Array(11)), /expected 2×2×3 = 12 bytes, got 11/);
  assert.throws(() => encodeRgbaPng(2, 2, new Uint8Array(12)), /expected 2×2×4 = 16 bytes, got 12/);
});
