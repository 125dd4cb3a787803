/**
 * The screenshot for the model: scaled so its longer side is at most `maxSide`, as a PNG data URL for an
 * `image_url` content part. Vision models see a few hundred pixels a side anyway; the full frame would only cost
 * tokens and bandwidth. Scaling and encoding run off the event loop (@farm/frames): in a worker the same loop drives
 * every device, and doing it in JS cost ~50 ms per 1080x1920 frame.
 */
import { encodeFrame } from "@farm/frames";
import type { Pixels } from "../types.ts";

export function scaledSize(width: number, height: number, maxSide: number): { width: number; height: number } {
  const scale = Math.max(width, height) / maxSide;
  if (scale <= 1) return { width, height };
  return { width: Math.max(1, Math.round(width / scale)), height: Math.max(1, Math.round(height / scale)) };
}

export async function screenshotDataUrl(p: Pixels, maxSide: number): Promise<string> {
  const size = scaledSize(p.width, p.height, maxSide);
  const png = await encodeFrame({ width: p.width, height: p.height, channels: 3, data: p.rgb }, { format: "png", size });
  return `data:image/png;base64,${png.toString("base64")}`;
}
