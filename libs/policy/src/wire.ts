/**
 * The JSON the HTTP policy sends: the observation with pixels as base64 (PNG or raw RGB) and the
 * episode context. Documented in README.md ("Remote policy protocol").
 */
import { encodePng } from "./png.ts";
import type { EpisodeContext, Observation } from "./types.ts";

export type PixelEncoding = "png" | "rgb";

export interface WirePixels {
  width: number;
  height: number;
  /** "png": a PNG file; "rgb": raw row-major RGB bytes, width*height*3. */
  encoding: PixelEncoding;
  /** base64 */
  data: string;
}

export interface WireObservation extends Omit<Observation, "pixels"> {
  pixels?: WirePixels;
}

export interface WireRequest {
  observation: WireObservation;
  /** The context of the last reset; null if act() is called before any reset. */
  context: EpisodeContext | null;
}

export function toWireRequest(observation: Observation, context: EpisodeContext | null, encoding: PixelEncoding): WireRequest {
  const { pixels, ...rest } = observation;
  const wire: WireObservation = rest;
  if (pixels) {
    const bytes = encoding === "png" ? encodePng(pixels) : Buffer.from(pixels.rgb.buffer, pixels.rgb.byteOffset, pixels.rgb.byteLength);
    wire.pixels = { width: pixels.width, height: pixels.height, encoding, data: bytes.toString("base64") };
  }
  return { observation: wire, context };
}

/** JSON.stringify that survives bigint extras (as numbers when exact, else strings). */
export function stringifyWire(req: WireRequest): string {
  return JSON.stringify(req, (_key, v: unknown) => (typeof v === "bigint" ? (Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()) : v));
}
