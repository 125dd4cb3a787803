/**
 * Per-episode limits: what `runEpisode({ limits })` may override for one episode, and the effective values
 * the runner uses (the override, else the task's `max_episode_*`, else the session config's step deadline).
 * A worker runs jobs with different limits on one bound session without copying the task or rebinding.
 */
import type { CompiledEpisodeConfig } from "./config.ts";

export interface EpisodeLimitOverrides {
  /** Overrides the task's max_episode_steps for this episode (`<= 0` disables the step limit). */
  maxEpisodeSteps?: number;
  /** Overrides the task's max_episode_sec for this episode (`<= 0` disables; truncated to an integer). */
  maxEpisodeSec?: number;
  /** Overrides the session config's `stepTimeoutMs` for this episode (> 0). */
  stepTimeoutMs?: number;
  /** Invalid policy answers after which the episode ends as `invalid_actions` (`<= 0`: no limit; each still counts as a step). */
  maxInvalidActions?: number;
  /** Bytes of recorded observations (observation-budget.ts); none: unbounded. */
  observationBudget?: ObservationBudgetSpec;
}

/** An episode's byte budget for recorded observations (observation-budget.ts). */
export interface ObservationBudgetSpec {
  /** Bytes the episode may record (trees + elements as JSON text, encoded frames, answer texts). */
  maxBytes: number;
  /** What happens past it: record no more and go on, or end the episode (`observation_budget`). @default "stop_recording" */
  onExceeded?: "stop_recording" | "end";
}

/** The limits one episode actually ran with (recorded on its trajectory). */
export interface EffectiveEpisodeLimits {
  maxEpisodeSteps: number;
  maxEpisodeSec: number;
  stepTimeoutMs: number;
  maxInvalidActions: number;
  observationBudget?: ObservationBudgetSpec;
}

/** Merges the overrides over the task's limits and the config; throws RangeError for a value that is not a usable number. */
export function effectiveLimits(
  task: { maxEpisodeSteps: number; maxEpisodeSec: number },
  config: Pick<CompiledEpisodeConfig, "stepTimeoutMs">,
  over: EpisodeLimitOverrides = {},
): EffectiveEpisodeLimits {
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined || k === "observationBudget") continue;
    if (typeof v !== "number" || !Number.isFinite(v)) throw new RangeError(`episode limit '${k}' must be a finite number, got ${String(v)}`);
  }
  if (over.stepTimeoutMs !== undefined && over.stepTimeoutMs <= 0) throw new RangeError(`episode limit 'stepTimeoutMs' must be > 0, got ${over.stepTimeoutMs}`);
  return {
    maxEpisodeSteps: over.maxEpisodeSteps ?? task.maxEpisodeSteps,
    maxEpisodeSec: over.maxEpisodeSec ?? task.maxEpisodeSec,
    stepTimeoutMs: over.stepTimeoutMs ?? config.stepTimeoutMs,
    maxInvalidActions: over.maxInvalidActions ?? 0,
    ...(over.observationBudget ? { observationBudget: over.observationBudget } : {}),
  };
}
