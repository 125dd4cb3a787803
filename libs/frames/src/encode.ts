/**
 * Frame encoding with libvips through `sharp` (prebuilt binaries ship inside its npm packages; no
 * compiler, no system library). The encoders (libspng/zlib-ng PNG, mozjpeg JPEG, libwebp WebP) run on
 * libuv's thread pool, so encoding a frame never blocks the event loop that drives the devices.
 */
import type Sharp from "sharp";
import { DEFAULT_LOSSY_QUALITY, type FrameSpec } from "./spec.ts";

/** Raw pixels as a device hands them over: row-major, 3 (RGB) or 4 (RGBA) bytes per pixel. */
export interface RawFrame {
  width: number;
  height: number;
  channels: 3 | 4;
  data: Uint8Array;
}

let sharpLoaded: Promise<typeof Sharp> | undefined;

/**
 * sharp (libvips and its native binding) on first encode, not at import: most processes that import the
 * farm's libs never encode a frame. Settings are applied once, as it loads.
 */
function loadSharp(): Promise<typeof Sharp> {
  sharpLoaded ??= import("sharp").then((m) => {
    const sharp = m.default;
    // One libvips worker per encode: frames from many devices are encoded in parallel by the thread pool
    // instead, which keeps every core busy without oversubscribing them.
    sharp.concurrency(1);
    // The encoders keep no state between frames; libvips' operation cache would only hold memory.
    sharp.cache(false);
    return sharp;
  });
  return sharpLoaded;
}

/** Checks a raw frame's shape; returns what is wrong or undefined. */
export function rawFrameProblem(f: RawFrame): string | undefined {
  if (!(Number.isSafeInteger(f.width) && f.width > 0 && Number.isSafeInteger(f.height) && f.height > 0)) return `bad frame size ${f.width}x${f.height}`;
  if (f.channels !== 3 && f.channels !== 4) return `bad channel count ${String(f.channels)}`;
  const want = f.width * f.height * f.channels;
  if (f.data.byteLength < want) return `frame data short: ${f.data.byteLength} bytes for ${f.width}x${f.height}x${f.channels}`;
  return undefined;
}

/**
 * Encodes one frame off the main thread. RGBA frames are stored as RGB (the alpha of a screen is opaque).
 * Rejects with an Error saying what was wrong with the frame.
 */
export async function encodeFrame(f: RawFrame, spec: FrameSpec): Promise<Buffer> {
  const bad = rawFrameProblem(f);
  if (bad) throw new Error(bad);
  const sharp = await loadSharp();
  let img = sharp(f.data, { raw: { width: f.width, height: f.height, channels: f.channels } });
  if (f.channels === 4) img = img.removeAlpha();
  if (spec.size && (spec.size.width !== f.width || spec.size.height !== f.height)) img = img.resize(spec.size.width, spec.size.height, { fit: "fill" });
  const quality = spec.quality ?? DEFAULT_LOSSY_QUALITY;
  switch (spec.format) {
    case "png":
      // Level 3 without adaptive filtering: screens are flat colours. Measured on a 1080x1920 RGB screen (zlib-ng):
      // level 1 4.9 ms / 67 KB, level 3 4.6 ms / 35 KB (fewer bytes to emit), level 6 6.8 ms / 34 KB; filtering ~45 ms.
      return img.png({ compressionLevel: 3, adaptiveFiltering: false }).toBuffer();
    case "jpeg":
      // Plain libjpeg-turbo path: mozjpeg's trellis quantisation costs 2-3x the CPU for ~10 % fewer bytes.
      return img.jpeg({ quality, mozjpeg: false, chromaSubsampling: "4:2:0" }).toBuffer();
    case "webp":
      // effort 0: the fastest libwebp method; the higher ones cost 3x the CPU per frame.
      return img.webp({ quality, effort: 0 }).toBuffer();
  }
}
