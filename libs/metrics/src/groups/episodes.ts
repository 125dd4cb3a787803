/** Finished episodes: counts by outcome and origin, duration, steps, reward; extras and log lines dropped on the way. */
import type { EndCause, EpisodeOutcome } from "@farm/episode";
import { Counter, Histogram } from "prom-client";
import { EPISODE_DURATION_BUCKETS_SEC, EPISODE_STEPS_BUCKETS, REWARD_BUCKETS } from "../buckets.ts";
import { closedLabel } from "../bounded-label.ts";
import type { MetricContext } from "../metric-context.ts";
import { METRIC } from "../names.ts";
import { DECLARED_EPISODE_ENDS, END_CAUSES, OUTCOMES } from "../vocabulary.ts";

export interface EpisodeFinished {
  taskId: string;
  outcome: EpisodeOutcome;
  cause: EndCause;
  durationSec: number;
  steps: number;
  reward: number;
  /** Who drove the episode: a campaign job, or a remote client over dm_env_rpc. @default "campaign" */
  origin?: EpisodeOrigin;
}

export type EpisodeOrigin = "campaign" | "remote";
const ORIGINS: readonly EpisodeOrigin[] = ["campaign", "remote"];

export function createEpisodeMetrics({ registers, report, valid, labels: { task }, opts }: MetricContext) {
  const episodes = new Counter({
    name: METRIC.episodes,
    help: "Finished episodes by task, outcome (terminated|truncated) and end cause",
    labelNames: ["task", "outcome", "cause"] as const,
    registers,
  });
  const outcome = closedLabel(METRIC.episodes, "outcome", OUTCOMES, report);
  const cause = closedLabel(METRIC.episodes, "cause", END_CAUSES, report);
  const episodeOrigins = new Counter({
    name: METRIC.episodeOrigins,
    help: "Finished episodes by origin (campaign|remote: a dm_env_rpc client) and outcome",
    labelNames: ["origin", "outcome"] as const,
    registers,
  });
  for (const origin of ORIGINS) for (const o of OUTCOMES) episodeOrigins.inc({ origin, outcome: o }, 0);
  const episodeDuration = new Histogram({
    name: METRIC.episodeDuration,
    help: "Wall-clock duration of finished episodes, reset end to last step",
    labelNames: ["task", "outcome"] as const,
    buckets: EPISODE_DURATION_BUCKETS_SEC,
    registers,
  });
  const episodeSteps = new Histogram({
    name: METRIC.episodeSteps,
    help: "Steps per finished episode",
    labelNames: ["task"] as const,
    buckets: EPISODE_STEPS_BUCKETS,
    registers,
  });
  const steps = new Counter({
    name: METRIC.steps,
    help: "Environment steps of finished episodes",
    labelNames: ["task"] as const,
    registers,
  });
  const episodeReward = new Histogram({
    name: METRIC.episodeReward,
    help: "Total reward per finished episode",
    labelNames: ["task"] as const,
    buckets: opts.rewardBuckets ?? REWARD_BUCKETS,
    registers,
  });
  const extrasDropped = new Counter({
    name: METRIC.extrasDropped,
    help: "Extras dropped (not in extras_spec, over the buffer cap, or unparseable)",
    labelNames: ["task"] as const,
    registers,
  });
  const logLinesMalformed = new Counter({
    name: METRIC.logLinesMalformed,
    help: "Logcat lines that did not parse",
    registers,
  });

  return {
    episodeFinished(e: EpisodeFinished): void {
      const t = task(METRIC.episodes, e.taskId);
      const o = outcome(e.outcome);
      episodes.inc({ task: t, outcome: o, cause: cause(e.cause) });
      episodeOrigins.inc({ origin: e.origin === "remote" ? "remote" : "campaign", outcome: o });
      if (valid(METRIC.episodeDuration, e.durationSec)) episodeDuration.observe({ task: t, outcome: o }, e.durationSec);
      if (valid(METRIC.episodeSteps, e.steps)) {
        episodeSteps.observe({ task: t }, e.steps);
        steps.inc({ task: t }, e.steps);
      }
      if (valid(METRIC.episodeReward, e.reward, true)) episodeReward.observe({ task: t }, e.reward);
    },
    /**
     * Creates this task's counter series at 0 — farm_steps_total{task}, farm_extras_dropped_total{task}
     * and farm_episodes_total{task,outcome,cause} for DECLARED_EPISODE_ENDS — so rate()/increase() count
     * the first episode (they miss the first increase of a series whose first sample already holds it).
     * Call it when a device is bound to the task, before its first episode. Idempotent. The task takes a
     * slot of the task cap like any recording; past the cap (or an id that is not an id) it declares the
     * "other" series, without counting an overflow (nothing was recorded).
     */
    declareTask(taskId: string): void {
      const t = task(METRIC.episodes, taskId, true);
      for (const [o, c] of DECLARED_EPISODE_ENDS) episodes.inc({ task: t, outcome: o, cause: c }, 0);
      steps.inc({ task: t }, 0);
      extrasDropped.inc({ task: t }, 0);
    },
    logLineMalformed(n = 1): void {
      if (valid(METRIC.logLinesMalformed, n)) logLinesMalformed.inc(n);
    },
    extraDropped(taskId: string, n = 1): void {
      if (valid(METRIC.extrasDropped, n)) extrasDropped.inc({ task: task(METRIC.extrasDropped, taskId) }, n);
    },
  };
}
