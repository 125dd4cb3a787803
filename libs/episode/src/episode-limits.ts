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
  /** Overrides the policy deadline (one `act()` / `reset()`) for this episode (> 0). */
  policyTimeoutMs?: number;
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
  /** One `act()` / `reset()` of the policy; past it the request is aborted and the episode ends as `policy_failed`. */
  policyTimeoutMs: number;
  observationBudget?: ObservationBudgetSpec;
}

/** Merges the overrides over the task's limits and the config; throws RangeError for a value that is not a usable number. */
export function effectiveLimits(
  task: { maxEpisodeSteps: number; maxEpisodeSec: number },
  config: Pick<CompiledEpisodeConfig, "stepTimeoutMs" | "policyTimeoutMs">,
  over: EpisodeLimitOverrides = {},
  policy: { actDeadlineMs?: number } = {},
): EffectiveEpisodeLimits {
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined || k === "observationBudget") continue;
    if (typeof v !== "number" || !Number.isFinite(v)) throw new RangeError(`episode limit '${k}' must be a finite number, got ${String(v)}`);
  }
  for (const k of ["stepTimeoutMs", "policyTimeoutMs"] as const) {
    const v = over[k];
    if (v !== undefined && v <= 0) throw new RangeError(`episode limit '${k}' must be > 0, got ${v}`);
  }
  return {
    maxEpisodeSteps: over.maxEpisodeSteps ?? task.maxEpisodeSteps,
    maxEpisodeSec: over.maxEpisodeSec ?? task.maxEpisodeSec,
    stepTimeoutMs: over.stepTimeoutMs ?? config.stepTimeoutMs,
    maxInvalidActions: over.maxInvalidActions ?? 0,
    policyTimeoutMs: policyDeadlineMs(config.policyTimeoutMs, over.policyTimeoutMs, policy.actDeadlineMs),
    ...(over.observationBudget ? { observationBudget: over.observationBudget } : {}),
  };
}

/** Used when neither the episode, the worker nor the policy names a policy deadline. */
export const DEFAULT_POLICY_TIMEOUT_MS = 30_000;

/**
 * The policy deadline: the episode's (campaign's) override, else the worker's setting (`policyTimeoutMs` > 0 in the
 * session config), else what the policy declares it needs, else DEFAULT_POLICY_TIMEOUT_MS.
 */
function policyDeadlineMs(configured: number, override: number | undefined, declared: number | undefined): number {
  if (override !== undefined) return override;
  if (configured > 0) return configured;
  if (declared !== undefined && Number.isFinite(declared) && declared > 0) return Math.ceil(declared);
  return DEFAULT_POLICY_TIMEOUT_MS;
}
