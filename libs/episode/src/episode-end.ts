/** How an episode ended, and the small pure mappings the run uses to say so. */
import type { StepStatus } from "@farm/adb";
import type { Transition } from "./limits.ts";
import { timeLimitSec } from "./limits.ts";
import type { EffectiveEpisodeLimits } from "./episode-limits.ts";
import type { EndCause, EpisodeOutcome } from "./trajectory-types.ts";

/** Causes that mean the device is in trouble and must go through recovery. */
export const DEVICE_TROUBLE: ReadonlySet<EndCause> = new Set<EndCause>(["reset_failed", "action_failed", "observation_failed", "device_hung", "device_lost"]);

export interface End {
  outcome: EpisodeOutcome;
  cause: EndCause;
  detail: string;
}

export const trunc = (cause: EndCause, detail: string): End => ({ outcome: "truncated", cause, detail });

/** Maps a failed device call to a cause: no answer → hung, transport gone → lost, anything else → `other`. */
export function causeOf(status: StepStatus | "check_failed" | "cancelled", other: EndCause): EndCause {
  if (status === "timeout") return "device_hung";
  if (status === "adb_error") return "device_lost";
  if (status === "cancelled") return "cancelled";
  return other;
}

/** The End of a LAST transition, with a detail that says which limit or line ended it. */
export function transitionEnd(
  tr: Extract<Transition, { last: true }>,
  f: { episodeSteps: number; elapsedMs: number; expectedActivity: string | undefined; verdictMatch: string | undefined },
  limits: EffectiveEpisodeLimits,
): End {
  const detail =
    tr.cause === "app_left" ? `expected ${f.expectedActivity ?? "?"}, check said ${f.verdictMatch ?? "?"}` :
    tr.cause === "step_limit" ? `step ${f.episodeSteps} > max_episode_steps ${limits.maxEpisodeSteps}` :
    tr.cause === "time_limit" ? `${(f.elapsedMs / 1000).toFixed(3)} s > max_episode_sec ${timeLimitSec(limits.maxEpisodeSec)}` :
    "episode_end line";
  return { outcome: tr.outcome, cause: tr.cause, detail };
}

/** android_env's cause-named counter for an ended episode. */
export function endCounterKey(cause: EndCause): string {
  switch (cause) {
    case "episode_end":
      return "reset_count_episode_end";
    case "step_limit":
    case "time_limit":
      return "reset_count_max_duration_reached";
    case "app_left":
      return "reset_count_user_exited";
    default:
      return `episode_count_${cause}`;
  }
}
