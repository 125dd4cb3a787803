/** Frames as PNG for the wire (and for trajectories): the policy's Pixels through @farm/png. */
import { encodeRgbPng } from "@farm/png";
import type { Pixels } from "./types.ts";

export function encodePng(pixels: Pixels): Buffer {
  return encodeRgbPng(pixels.width, pixels.height, pixels.rgb);
}
