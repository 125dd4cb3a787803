/**
 * @module @farm/metrics
 * Every farm metric name, one prom-client Registry per process, and the `/metrics` endpoint.
 *
 *   const metrics = createFarmMetrics({ service: "worker" });
 *   const server = await startMetricsServer({ port: 9464, metrics });
 *   metrics.episodeFinished({ taskId, outcome, cause, durationSec, steps, reward });
 */
export { createFarmMetrics, type FarmMetrics, type FarmMetricsOptions, type EpisodeFinished, type EpisodeOrigin, type AdbCall, type ScoreResult, type OpenEnvSessionEnd } from "./farm-metrics.ts";
export { startMetricsServer, type MetricsServer, type MetricsServerOptions, type MetricsSource } from "./metrics-server.ts";
export type { QueueDepthSample, QueueDepthSource } from "./queue-depth.ts";
export { METRIC, type MetricName } from "./names.ts";
export { type StepPhase, type QueueState, type Transport, type RelaunchCause } from "./vocabulary.ts";
export { FARM_VERSION } from "./version.ts";
