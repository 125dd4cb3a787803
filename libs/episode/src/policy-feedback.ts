/**
 * What a learning policy is told besides the observation (dm_env's TimeStep): the step type, the previous
 * step's reward and discount with each observation, and the episode's end (LAST step, return) once.
 */
import type { EpisodeEndInfo, Observation, Policy } from "@farm/policy";
import { withDeadline } from "./deadline.ts";
import { coerceError } from "./errors.ts";
import type { End } from "./episode-end.ts";
import type { StepRecord } from "./trajectory-types.ts";

export function markFirst(obs: Observation): void {
  obs.stepType = "FIRST";
  obs.reward = 0;
  obs.discount = 1;
}

export function markMid(obs: Observation, reward: number): void {
  obs.stepType = "MID";
  obs.reward = reward;
  obs.discount = 1;
}

/** The LAST time step: discount 0 when the task ended the episode, 1 when it was cut short. */
export function episodeEndInfo(end: End, steps: readonly StepRecord[]): EpisodeEndInfo {
  return {
    reward: steps.length ? steps[steps.length - 1]!.reward : 0,
    discount: end.outcome === "terminated" ? 0 : 1,
    episodeReturn: steps.reduce((a, s) => a + s.reward, 0),
    steps: steps.length,
    outcome: end.outcome,
    cause: end.cause,
  };
}

/**
 * Tells the policy the episode ended, within `timeoutMs`. Never throws: the episode is already over and
 * recorded; a failure comes back as a message for one log line.
 */
export async function tellEpisodeEnd(policy: Policy, info: EpisodeEndInfo, timeoutMs: number): Promise<string | undefined> {
  if (!policy.endEpisode) return undefined;
  try {
    const r = await withDeadline(policy.endEpisode(info), timeoutMs);
    return r.timedOut ? `policy.endEpisode did not finish in ${timeoutMs} ms` : undefined;
  } catch (e) {
    return `policy.endEpisode: ${coerceError(e).message}`;
  }
}
