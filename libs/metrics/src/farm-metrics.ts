/**
 * Every farm metric, in one object that owns its Registry. Create it once per process
 * (`createFarmMetrics`) and pass it to whatever records; serve it with `startMetricsServer`.
 * The metrics live in small groups (`groups/`: episodes, steps, agent, policy, adb, devices,
 * trajectories, campaigns and queues, commits and Redis) that share one `MetricContext`; this
 * composes them, in the order their metrics appear on `/metrics`.
 *
 * Rules kept here so callers cannot break them:
 *   - names: `farm_` prefix, base units as suffix (`_seconds`, `_bytes`), counters end in `_total`;
 *   - labels: bounded — closed sets map unknown values to "other", open sets (task, adb op, queue,
 *     device state, recovery cause) keep the first N well-formed values, then "other"; never an
 *     episode id, job id, seed or serial (no method takes one);
 *   - parameters are typed with the owning libraries' unions; values that still arrive outside them
 *     at run time (from JSON, older workers) are guarded as above;
 *   - bad numbers (NaN, negative durations) are dropped and counted, never thrown.
 */
import { collectDefaultMetrics, Registry } from "prom-client";
import { createAdbMetrics } from "./groups/adb.ts";
import { createAgentMetrics, createStepMetrics } from "./groups/agent.ts";
import { createCampaignMetrics } from "./groups/campaigns.ts";
import { createCommitMetrics } from "./groups/commits.ts";
import { createDeviceMetrics } from "./groups/devices.ts";
import { createEpisodeMetrics } from "./groups/episodes.ts";
import { createOperatorMetrics } from "./groups/operators.ts";
import { createScoreMetrics } from "./groups/scores.ts";
import { createOpenEnvMetrics } from "./groups/openenv.ts";
import { createPolicyMetrics } from "./groups/policy.ts";
import { createTrajectoryMetrics } from "./groups/trajectories.ts";
import { createVersionMetrics } from "./groups/versions.ts";
import { createMetricContext, type FarmMetricsOptions } from "./metric-context.ts";

export type { FarmMetricsOptions } from "./metric-context.ts";
export type { EpisodeFinished, EpisodeOrigin } from "./groups/episodes.ts";
export type { AdbCall } from "./groups/adb.ts";
export type { ScoreResult } from "./groups/scores.ts";
export type { OpenEnvSessionEnd } from "./groups/openenv.ts";

export type FarmMetrics = ReturnType<typeof createFarmMetrics>;

export function createFarmMetrics(opts: FarmMetricsOptions) {
  const registry = new Registry();
  registry.setDefaultLabels({ ...opts.defaultLabels, service: opts.service });
  if (opts.collectDefault ?? true) collectDefaultMetrics({ register: registry });
  const ctx = createMetricContext(opts, registry);
  const groups = {
    ...createEpisodeMetrics(ctx),
    ...createScoreMetrics(ctx),
    ...createOpenEnvMetrics(ctx),
    ...createStepMetrics(ctx),
    ...createAgentMetrics(ctx),
    ...createPolicyMetrics(ctx),
    ...createAdbMetrics(ctx),
    ...createDeviceMetrics(ctx),
    ...createTrajectoryMetrics(ctx),
    ...createCampaignMetrics(ctx),
    ...createCommitMetrics(ctx),
    ...createVersionMetrics(ctx),
    ...createOperatorMetrics(ctx),
  };
  // The metrics' own health goes last: it waits for this scrape's async collections (queue depth).
  ctx.registerHealth();
  return {
    registry,
    /** The exposition text, as `/metrics` serves it. */
    metricsText: (): Promise<string> => registry.metrics(),
    /** The content type matching `metricsText()`. */
    get contentType(): string {
      return registry.contentType;
    },
    ...groups,
  };
}
