/**
 * What a campaign asks frames to be stored as: an encoding (lossless PNG, or lossy JPEG / WebP for data
 * sets where that is acceptable), a quality for the lossy ones, and an optional size (default: the
 * device's own). Written as text on the command line and in job options: `png`, `jpeg:85`, `webp:80`,
 * with an optional `@WxH` (e.g. `jpeg:85@540x960`).
 */

export type FrameFormat = "png" | "jpeg" | "webp";

export const FRAME_FORMATS: readonly FrameFormat[] = ["png", "jpeg", "webp"];

export interface FrameSpec {
  format: FrameFormat;
  /** 1…100 for jpeg/webp (default 85); ignored for png. */
  quality?: number;
  /** Store frames at this size (scaled); absent = the device's size. */
  size?: { width: number; height: number };
}

export const DEFAULT_FRAME_SPEC: FrameSpec = Object.freeze({ format: "png" });

export const DEFAULT_LOSSY_QUALITY = 85;

/** Parses `png`, `jpeg[:Q]`, `webp[:Q]`, each with an optional `@WxH`; returns a message saying what is wrong otherwise. */
export function parseFrameSpec(text: string): FrameSpec | string {
  const m = /^(png|jpeg|jpg|webp)(?::(\d{1,3}))?(?:@(\d{1,5})x(\d{1,5}))?$/i.exec(text.trim());
  if (!m) return `frame encoding ${JSON.stringify(text.slice(0, 60))} is not one of png, jpeg[:QUALITY], webp[:QUALITY] (optionally @WIDTHxHEIGHT, e.g. jpeg:85@540x960)`;
  const lower = m[1]!.toLowerCase();
  const format: FrameFormat = lower === "jpg" ? "jpeg" : (lower as FrameFormat);
  const spec: FrameSpec = { format };
  if (m[2] !== undefined) {
    const q = Number(m[2]);
    if (format === "png") return `frame encoding ${JSON.stringify(text)}: png is lossless and takes no quality`;
    if (q < 1 || q > 100) return `frame encoding ${JSON.stringify(text)}: quality must be 1…100`;
    spec.quality = q;
  }
  if (m[3] !== undefined) {
    const width = Number(m[3]);
    const height = Number(m[4]);
    if (width < 1 || height < 1) return `frame encoding ${JSON.stringify(text)}: size must be at least 1x1`;
    spec.size = { width, height };
  }
  return spec;
}

/** The text form of a spec (inverse of parseFrameSpec), e.g. for the trajectory record. */
export function formatFrameSpec(spec: FrameSpec): string {
  const q = spec.format !== "png" && spec.quality !== undefined ? `:${spec.quality}` : "";
  const s = spec.size ? `@${spec.size.width}x${spec.size.height}` : "";
  return `${spec.format}${q}${s}`;
}
