/**
 * @farm/frames: the spec's text form, the encoders (each output decodes, PNG is lossless, scaling works),
 * and the recorder (add() does not wait for the encode, failures are counted not thrown, backpressure).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import sharp from "sharp";
import { encodeFrame, FrameRecorder, formatFrameSpec, parseFrameSpec, rgbaToRgb, type RawFrame } from "../src/index.ts";

/** A UI-like frame: flat blocks of colour with a few edges, RGBA. */
function uiFrame(width: number, height: number): RawFrame {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const tile = ((x >> 5) + (y >> 5)) % 3;
      data[i] = tile === 0 ? 238 : 120;
      data[i + 1] = tile === 1 ? 228 : 90;
      data[i + 2] = (x * 7 + y) & 0xff;
      data[i + 3] = 255;
    }
  return { width, height, channels: 4, data };
}

describe("frame spec", () => {
  test("text forms parse and print back", () => {
    for (const t of ["png", "jpeg:85", "webp:60", "png@540x960", "jpeg:90@270x480"]) {
      const s = parseFrameSpec(t);
      assert.ok(typeof s !== "string", `${t}: ${String(s)}`);
      assert.equal(formatFrameSpec(s), t);
    }
    assert.deepEqual(parseFrameSpec("JPG"), { format: "jpeg" });
  });

  test("bad text says what is allowed", () => {
    for (const t of ["gif", "png:50", "jpeg:0", "jpeg:101", "webp@0x10", "", "png;rm -rf"]) {
      const s = parseFrameSpec(t);
      assert.equal(typeof s, "string", t);
      assert.match(s as string, /png|quality|size/);
    }
  });
});

describe("encodeFrame", () => {
  const f = uiFrame(360, 640);

  test("png is lossless: decoding gives the RGB of the frame", async () => {
    const png = await encodeFrame(f, { format: "png" });
    assert.equal(png.subarray(1, 4).toString("latin1"), "PNG");
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height, info.channels], [360, 640, 3]);
    assert.ok(Buffer.from(rgbaToRgb(f.data, 360, 640)).equals(data));
  });

  test("jpeg and webp decode to the frame's size, smaller than png", async () => {
    const png = await encodeFrame(f, { format: "png" });
    for (const format of ["jpeg", "webp"] as const) {
      const bytes = await encodeFrame(f, { format, quality: 80 });
      const meta = await sharp(bytes).metadata();
      assert.equal(meta.format, format);
      assert.deepEqual([meta.width, meta.height], [360, 640]);
      assert.ok(bytes.length < png.length, `${format} ${bytes.length} bytes vs png ${png.length}`);
    }
  });

  test("a configured size scales the frame", async () => {
    const bytes = await encodeFrame(f, { format: "png", size: { width: 90, height: 160 } });
    const meta = await sharp(bytes).metadata();
    assert.deepEqual([meta.width, meta.height], [90, 160]);
  });

  test("rgbaToRgb drops alpha for any size and alignment (aligned fast path, odd tails, unaligned views)", () => {
    for (const [w, h] of [[1, 1], [3, 1], [5, 3], [7, 7], [64, 2]] as const) {
      const backing = new Uint8Array(w * h * 4 + 1);
      for (let i = 0; i < backing.length; i++) backing[i] = (i * 131 + 7) & 0xff;
      for (const rgba of [backing.subarray(0, w * h * 4), backing.subarray(1)]) {
        const expected = new Uint8Array(w * h * 3);
        for (let p = 0; p < w * h; p++) expected.set(rgba.subarray(p * 4, p * 4 + 3), p * 3);
        assert.deepEqual(rgbaToRgb(rgba, w, h), expected, `${w}x${h} at offset ${rgba.byteOffset}`);
      }
    }
  });

  test("RGB frames are taken as they are", async () => {
    const rgb = rgbaToRgb(f.data, 360, 640);
    const png = await encodeFrame({ width: 360, height: 640, channels: 3, data: rgb }, { format: "png" });
    const { data } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    assert.ok(Buffer.from(rgb).equals(data));
  });

  test("a short frame is rejected with its size", async () => {
    await assert.rejects(encodeFrame({ width: 100, height: 100, channels: 4, data: new Uint8Array(10) }, { format: "png" }), /short: 10 bytes for 100x100x4/);
  });
});

describe("rgbaToRgb", () => {
  test("drops alpha, also from an unaligned view", () => {
    const buf = new Uint8Array(1 + 8);
    buf.set([1, 2, 3, 4, 5, 6, 7, 8], 1);
    assert.deepEqual([...rgbaToRgb(buf.subarray(1), 2, 1)], [1, 2, 3, 5, 6, 7]);
    assert.deepEqual([...rgbaToRgb(new Uint8Array([9, 8, 7, 0, 1, 1, 1, 255]), 2, 1)], [9, 8, 7, 1, 1, 1]);
  });
});

describe("FrameRecorder", () => {
  test("add() returns while the frame is still encoding; finish() gives every frame by key", async () => {
    const rec = new FrameRecorder({ format: "png" });
    const f = uiFrame(720, 1280);
    await rec.add(1, f);
    await rec.add(2, f);
    assert.ok(rec.inFlight > 0, "both encodes finished before add() returned: nothing ran in the background");
    const frames = await rec.finish();
    assert.deepEqual([...frames.keys()].sort(), [1, 2]);
    assert.equal(Buffer.from(frames.get(1)!).subarray(1, 4).toString("latin1"), "PNG");
    assert.equal(rec.stats.failed, 0);
  });

  test("a frame that fails to encode is left out and counted", async () => {
    const rec = new FrameRecorder({ format: "jpeg" });
    await rec.add(1, uiFrame(16, 16));
    await rec.add(2, { width: 16, height: 16, channels: 4, data: new Uint8Array(3) });
    await rec.track(3, Promise.reject(new Error("device gone")));
    const frames = await rec.finish();
    assert.deepEqual([...frames.keys()], [1]);
    assert.equal(rec.stats.failed, 2);
    assert.match(rec.stats.firstError ?? "", /short|device gone/);
  });

  test("past maxInFlight, add() waits for a slot (memory stays bounded)", async () => {
    const gates: Array<() => void> = [];
    const slow = () => new Promise<Uint8Array>((resolve) => gates.push(() => resolve(new Uint8Array([1]))));
    const rec = new FrameRecorder({ format: "png" }, 2, slow);
    await rec.add(1, uiFrame(4, 4));
    await rec.add(2, uiFrame(4, 4));
    let third = false;
    const p = rec.add(3, uiFrame(4, 4)).then(() => (third = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(third, false, "a third frame was taken while two were encoding");
    gates.shift()!();
    await p;
    assert.equal(rec.inFlight, 2);
    while (gates.length) gates.shift()!();
    await new Promise((r) => setTimeout(r, 0));
    gates.forEach((g) => g());
    const done = rec.finish();
    while (gates.length) gates.shift()!();
    assert.equal((await done).size, 3);
  });
});
