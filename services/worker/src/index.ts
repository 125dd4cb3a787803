/**
 * @module @farm/worker
 * The worker service: binds one BullMQ worker (concurrency 1) to each device on its adb server, runs
 * episode jobs with @farm/episode, commits each episode's trajectory exactly once, serves /metrics.
 */
export { resolveWorkerConfig, type WorkerConfig, type WorkerConfigInput } from "./config.ts";
export { WorkerService, type WorkerServiceOptions } from "./worker-service.ts";
export { EpisodeStore, fileChecksum, type PublishResult, type PendingMarker } from "./episode-store.ts";
export { decideAttempt, attemptsLeft, type AttemptFacts, type AttemptDecision } from "./retry-decision.ts";
export { runWorkerMain } from "./main.ts";
export { reconcileFolders, formatReconcile, type ReconcileReport, type ReconcileOptions } from "./reconcile.ts";
export { resolvePending } from "./commit-flow.ts";
