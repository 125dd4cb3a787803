/**
 * The JSON the HTTP policy sends (PROTOCOL.md): protocol 2 step and episode-end messages, single or in a
 * batch. A step message keeps protocol 1's `observation` and `context` fields, so a protocol 1 server
 * that ignores unknown fields keeps working.
 */
import { randomUUID } from "node:crypto";
import { encodePng } from "./png.ts";
import type { EpisodeContext, EpisodeEndInfo, Observation } from "./types.ts";

export const POLICY_PROTOCOL = 2;

export type PixelEncoding = "png" | "rgb";

export interface WirePixels {
  width: number;
  height: number;
  /** "png": a PNG file; "rgb": raw row-major RGB bytes, width*height*3. */
  encoding: PixelEncoding;
  /** base64 */
  data: string;
}

/**
 * The observation on the wire. Agent fields (PROTOCOL.md, "Agent fields"): `goal` always, `elements` when the
 * step's screen was read as a tree, `previous` after a step whose answer was a UI action or invalid.
 */
export interface WireObservation extends Omit<Observation, "pixels" | "stepType" | "reward" | "discount"> {
  pixels?: WirePixels;
}

/** Which episode a message belongs to: a fresh id per reset, with the reset's seed and index. */
export interface WireEpisode {
  id: string;
  seed: number;
  index: number;
}

export interface WireRequest {
  protocol: typeof POLICY_PROTOCOL;
  type: "step";
  /** Null if act() is called before any reset. */
  episode: WireEpisode | null;
  stepType: "first" | "mid";
  /** The previous step's reward (0 with "first"). */
  reward: number;
  discount: number;
  observation: WireObservation;
  /** The context of the last reset; null if act() is called before any reset. (Protocol 1 field.) */
  context: EpisodeContext | null;
}

export interface WireEpisodeEnd {
  protocol: typeof POLICY_PROTOCOL;
  type: "episode_end";
  episode: WireEpisode | null;
  stepType: "last";
  reward: number;
  discount: number;
  episodeReturn: number;
  steps: number;
  outcome: string;
  cause: string;
}

export type WireMessage = WireRequest | WireEpisodeEnd;

export function toWireRequest(observation: Observation, context: EpisodeContext | null, encoding: PixelEncoding, episode: WireEpisode | null = null): WireRequest {
  const { pixels, stepType, reward, discount, ...rest } = observation;
  const wire: WireObservation = rest;
  if (pixels) {
    const bytes = encoding === "png" ? encodePng(pixels) : Buffer.from(pixels.rgb.buffer, pixels.rgb.byteOffset, pixels.rgb.byteLength);
    wire.pixels = { width: pixels.width, height: pixels.height, encoding, data: bytes.toString("base64") };
  }
  const first = (stepType ?? (observation.stepIndex === 0 ? "FIRST" : "MID")) === "FIRST";
  return {
    protocol: POLICY_PROTOCOL,
    type: "step",
    episode,
    stepType: first ? "first" : "mid",
    reward: first ? 0 : (reward ?? 0),
    discount: discount ?? 1,
    observation: wire,
    context,
  };
}

export function toWireEpisodeEnd(end: EpisodeEndInfo, episode: WireEpisode | null): WireEpisodeEnd {
  return { protocol: POLICY_PROTOCOL, type: "episode_end", episode, stepType: "last", ...end };
}

/** JSON.stringify that survives bigint extras (as numbers when exact, else strings). */
export function stringifyWire(req: unknown): string {
  return JSON.stringify(req, (_key, v: unknown) => (typeof v === "bigint" ? (Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()) : v));
}

/** A fresh episode id (a server keys its per-episode state on it). */
export function newEpisodeId(): string {
  return randomUUID();
}
