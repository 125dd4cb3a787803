/**
 * @module @farm/worker
 * The worker service: one BullMQ worker per host feeding a local pool of the devices on its adb server
 * (concurrency = ready devices), runs episode jobs with @farm/episode, commits each episode's trajectory exactly once, serves /metrics.
 */
export { resolveWorkerConfig, type WorkerConfig, type WorkerConfigInput } from "./config.ts";
export { TREE_SOURCES, type DeviceTreesConfig, type TreeSourceSetting } from "./trees-config.ts";
export { createDeviceTrees, DeviceTrees, type ForwarderFallback } from "./a11y-trees.ts";
export { WorkerService, type WorkerServiceOptions } from "./worker-service.ts";
export { EpisodeStore, fileChecksum, type PublishResult, type PendingMarker } from "./episode-store.ts";
export { decideAttempt, attemptsLeft, type AttemptFacts, type AttemptDecision } from "./retry-decision.ts";
export { runWorkerMain } from "./main.ts";
export { reconcileFolders, formatReconcile, type ReconcileReport, type ReconcileOptions } from "./reconcile.ts";
export { resolvePending } from "./commit-flow.ts";
export { StaticDeviceSource, type DeviceSource } from "./device-source.ts";
export { DevicePool, PoolClosedError, type DeviceLease, type PoolMember } from "./device-pool.ts";
export { HostJobPump, type PumpMember } from "./host-job-pump.ts";
export { taskInstanceFor, jobParams, scoreOutcome } from "./task-instance.ts";
