/**
 * The transition decision after a step (task-format.md §7.7.4), a pure function. First match wins:
 * app left → truncation; episode_end → termination; step limit → truncation; time limit → truncation; else MID.
 * Boundaries as upstream: with max_episode_steps = N, steps 1..N are MID and step N+1 is LAST; max_episode_sec
 * is truncated to an integer and compared strictly against the wall-clock time since the end of the reset.
 */
import type { EndCause, EpisodeOutcome } from "./trajectory-types.ts";

export interface StepFacts {
  /** Steps taken so far in this episode, this one included (1-based). */
  episodeSteps: number;
  /** Milliseconds since the end of the reset steps. */
  elapsedMs: number;
  /** The app-screen check taken for this step said the agent left the app. */
  appLeft: boolean;
  /** An episode_end line was read since the reset. */
  episodeEnd: boolean;
}

export interface EpisodeLimits {
  /** `<= 0` disables. */
  maxEpisodeSteps: number;
  /** `<= 0` disables; truncated to an integer. */
  maxEpisodeSec: number;
}

export type Transition = { last: false } | { last: true; outcome: EpisodeOutcome; cause: EndCause };

/** Whole seconds the time limit allows, or undefined when disabled (upstream: `int(max_episode_sec)`). */
export function timeLimitSec(maxEpisodeSec: number): number | undefined {
  return maxEpisodeSec > 0 ? Math.trunc(maxEpisodeSec) : undefined;
}

export function decideTransition(f: StepFacts, l: EpisodeLimits): Transition {
  if (f.appLeft) return { last: true, outcome: "truncated", cause: "app_left" };
  if (f.episodeEnd) return { last: true, outcome: "terminated", cause: "episode_end" };
  if (l.maxEpisodeSteps > 0 && f.episodeSteps > l.maxEpisodeSteps) return { last: true, outcome: "truncated", cause: "step_limit" };
  const sec = timeLimitSec(l.maxEpisodeSec);
  if (sec !== undefined && f.elapsedMs / 1000 > sec) return { last: true, outcome: "truncated", cause: "time_limit" };
  return { last: false };
}
