/**
 * CreateWorld / Reset settings: names, types and ranges checked, every problem named with its setting.
 *   task (string, required)   seed (int)   max_episode_steps (int)   max_episode_sec (number)
 *   step_timeout_ms (int)     frame_size (int [2]: height, width)   a11y_every (int: record the tree every N steps)
 */
import { numbers, scalarNumber, scalarString, type Settings } from "@farm/dm-env-rpc";
import type { EpisodeLimitOverrides } from "@farm/episode";
import { invalid } from "./env-error.ts";
import { coerceError } from "@farm/errors";

export interface WorldSettings {
  taskId: string;
  seed: number | undefined;
  limits: EpisodeLimitOverrides;
  frameSize: { height: number; width: number } | undefined;
  /** Record the screen as a tree every N steps (0: never), as `farm run --a11y-every`; also what `a11y_tree` observes. */
  a11yEvery: number;
}

const CREATE_KEYS = new Set(["task", "seed", "max_episode_steps", "max_episode_sec", "step_timeout_ms", "frame_size", "a11y_every"]);

function check<T>(name: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw invalid(`setting '${name}': ${coerceError(e).message}`);
  }
}

function int(settings: Settings, name: string, min: number, max: number): number | undefined {
  const t = settings[name];
  if (!t) return undefined;
  const v = check(name, () => scalarNumber(t, name));
  if (!Number.isSafeInteger(v) || v < min || v > max) throw invalid(`setting '${name}': must be an integer in ${min}..${max}, got ${v}`);
  return v;
}

export function unknownSettings(settings: Settings, known: ReadonlySet<string>, request: string): void {
  const bad = Object.keys(settings).filter((k) => !known.has(k));
  if (bad.length > 0) throw invalid(`${request}: unknown setting(s) ${bad.slice(0, 5).map((k) => `'${k.slice(0, 64)}'`).join(", ")}; known: ${[...known].join(", ")}`);
}

export function parseCreateSettings(settings: Settings = {}): WorldSettings {
  unknownSettings(settings, CREATE_KEYS, "CreateWorld");
  if (!settings.task) throw invalid("CreateWorld: setting 'task' (the task id, a string) is required");
  const taskId = check("task", () => scalarString(settings.task!, "task"));
  const seed = int(settings, "seed", 0, 2 ** 31 - 1);
  const limits: EpisodeLimitOverrides = {};
  const steps = int(settings, "max_episode_steps", 0, 1_000_000);
  if (steps !== undefined) limits.maxEpisodeSteps = steps;
  if (settings.max_episode_sec) {
    const sec = check("max_episode_sec", () => scalarNumber(settings.max_episode_sec!, "max_episode_sec"));
    if (!Number.isFinite(sec) || sec < 0 || sec > 86_400) throw invalid(`setting 'max_episode_sec': must be a number in 0..86400, got ${sec}`);
    limits.maxEpisodeSec = sec;
  }
  const stepTimeout = int(settings, "step_timeout_ms", 1, 600_000);
  if (stepTimeout !== undefined) limits.stepTimeoutMs = stepTimeout;
  let frameSize: WorldSettings["frameSize"];
  if (settings.frame_size) {
    const v = check("frame_size", () => numbers(settings.frame_size!, "frame_size"));
    if (v.length !== 2 || !v.every((n) => Number.isSafeInteger(n) && n >= 1 && n <= 8192)) throw invalid("setting 'frame_size': two integers [height, width] in 1..8192");
    frameSize = { height: v[0]!, width: v[1]! };
  }
  const a11yEvery = int(settings, "a11y_every", 0, 1_000_000) ?? 0;
  return { taskId, seed, limits, frameSize, a11yEvery };
}

/** Reset settings: an optional `seed` for the next episode. */
export function parseResetSeed(settings: Settings = {}): number | undefined {
  unknownSettings(settings, new Set(["seed"]), "Reset");
  return int(settings, "seed", 0, 2 ** 31 - 1);
}
