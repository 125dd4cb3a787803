/**
 * Realistic synthetic episodes for tests and benchmarks (a 2048-like task): ~100 steps with typical
 * extras and, optionally, small real PNG observation frames. Deterministic for a given seed.
 */
import zlib from "node:zlib";
import { encodeRgbPng } from "@farm/png";
import { seededRandomFromState } from "@farm/seeded-random";
import type { StepRecord } from "@farm/episode";
import { episodeIdOf } from "./episode-id.ts";
import type { EpisodeRecord } from "./types.ts";

export interface SyntheticEpisodeOptions {
  campaignId?: string;
  episodeIndex?: number;
  attempt?: number;
  taskId?: string;
  steps?: number;
  /** Attach a PNG frame to every step. */
  frames?: boolean;
  /** Side of the square frame in pixels (64 → a few KB of PNG). */
  frameSize?: number;
  startedAt?: Date;
  worker?: string;
}

/** The seeded PRNG (@farm/seeded-random) started from the seed itself as its 32-bit state. */
function rng(seed: number): () => number {
  const r = seededRandomFromState(seed);
  return () => r.next();
}

/** A valid RGB PNG of a noisy 4×4 tile board. */
export function syntheticPng(size: number, seed: number): Buffer {
  const r = rng(seed);
  const tiles = Array.from({ length: 16 }, () => [r() * 255, r() * 255, r() * 255]);
  const rgb = new Uint8Array(size * size * 3);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const tile = tiles[Math.floor((y * 4) / size) * 4 + Math.floor((x * 4) / size)] ?? [0, 0, 0];
      for (let c = 0; c < 3; c++) rgb[(y * size + x) * 3 + c] = Math.min(255, Math.max(0, (tile[c] ?? 0) + (r() - 0.5) * 24));
    }
  }
  // zlib's default level, as these frames have always been compressed.
  return encodeRgbPng(size, size, rgb, { level: zlib.constants.Z_DEFAULT_COMPRESSION });
}

const pngCache = new Map<string, Buffer>();
function cachedPng(size: number, variant: number): Buffer {
  const key = `${size}:${variant}`;
  let png = pngCache.get(key);
  if (!png) pngCache.set(key, (png = syntheticPng(size, variant + 1)));
  return png;
}

export function syntheticEpisode(seed: number, o: SyntheticEpisodeOptions = {}): EpisodeRecord {
  const r = rng(seed);
  const campaignId = o.campaignId ?? "campaign-synthetic";
  const episodeIndex = o.episodeIndex ?? seed;
  const stepCount = o.steps ?? 100;
  const startedAt = o.startedAt ?? new Date(Date.UTC(2026, 10, 22, 3, 0, 0) + seed * 1000);
  const steps: StepRecord[] = [];
  let total = 0;
  let t = 0;
  const board = Array.from({ length: 4 }, () => [0, 0, 0, 0]);
  for (let i = 1; i <= stepCount; i++) {
    t += 40 + Math.floor(r() * 80);
    const reward = r() < 0.3 ? 2 ** (1 + Math.floor(r() * 6)) : 0;
    total += reward;
    board[Math.floor(r() * 4)]![Math.floor(r() * 4)] = 2 ** Math.floor(r() * 8);
    const step: StepRecord = {
      index: i,
      timeOffsetMs: t,
      action: { actionType: r() < 0.5 ? "TOUCH" : "LIFT", touchPosition: [r(), r()] },
      reward,
      extras: [
        { name: "score", dtype: "INT32", shape: [], value: total },
        { name: "board", dtype: "INT32", shape: [4, 4], value: board.map((row) => [...row]) },
        { name: "direction", dtype: "STRING", shape: [], value: ["up", "down", "left", "right"][Math.floor(r() * 4)] },
        { name: "q_values", dtype: "FLOAT", shape: [4], value: [r(), r(), r(), r()] },
        { name: "moved", dtype: "BOOL", shape: [], value: r() < 0.8 },
      ],
    };
    if (o.frames) step.frame = cachedPng(o.frameSize ?? 64, (seed + i) % 8);
    steps.push(step);
  }
  const terminated = r() < 0.7;
  return {
    episodeId: episodeIdOf(campaignId, episodeIndex),
    campaignId,
    episodeIndex,
    attempt: o.attempt ?? 1,
    worker: o.worker ?? "worker-synthetic",
    taskDialect: "current",
    taskId: o.taskId ?? "classic_2048",
    taskHash: "sha256:5f1c0ffee",
    deviceSerial: `emulator-${5554 + (seed % 8) * 2}`,
    policyName: "random",
    policyVersion: "1.0.0",
    seed,
    startedAt,
    endedAt: new Date(startedAt.getTime() + t + 500),
    outcome: terminated ? "terminated" : "truncated",
    cause: terminated ? "episode_end" : "step_limit",
    causeDetail: terminated ? "" : `max_episode_steps=${stepCount}`,
    totalReward: total,
    steps,
    counters: { malformed_log_lines: Math.floor(r() * 3) },
  };
}
