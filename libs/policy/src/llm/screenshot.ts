/**
 * The screenshot for the model: downscaled (box filter) so its longer side is at most `maxSide`, as a PNG data URL
 * for an `image_url` content part. Vision models see a few hundred pixels a side anyway; the full frame would only
 * cost tokens and bandwidth.
 */
import { encodeRgbPng } from "@farm/png";
import type { Pixels } from "../types.ts";

export function downscale(p: Pixels, maxSide: number): Pixels {
  const scale = Math.max(p.width, p.height) / maxSide;
  if (scale <= 1) return p;
  const w = Math.max(1, Math.round(p.width / scale));
  const h = Math.max(1, Math.round(p.height / scale));
  const out = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) {
    const y0 = Math.floor((y * p.height) / h);
    const y1 = Math.max(y0 + 1, Math.floor(((y + 1) * p.height) / h));
    for (let x = 0; x < w; x++) {
      const x0 = Math.floor((x * p.width) / w);
      const x1 = Math.max(x0 + 1, Math.floor(((x + 1) * p.width) / w));
      let r = 0;
      let g = 0;
      let b = 0;
      for (let sy = y0; sy < y1; sy++) {
        let i = (sy * p.width + x0) * 3;
        for (let sx = x0; sx < x1; sx++, i += 3) {
          r += p.rgb[i]!;
          g += p.rgb[i + 1]!;
          b += p.rgb[i + 2]!;
        }
      }
      const n = (y1 - y0) * (x1 - x0);
      const o = (y * w + x) * 3;
      out[o] = Math.round(r / n);
      out[o + 1] = Math.round(g / n);
      out[o + 2] = Math.round(b / n);
    }
  }
  return { width: w, height: h, rgb: out };
}

export function screenshotDataUrl(p: Pixels, maxSide: number): string {
  const small = downscale(p, maxSide);
  return `data:image/png;base64,${encodeRgbPng(small.width, small.height, small.rgb).toString("base64")}`;
}
