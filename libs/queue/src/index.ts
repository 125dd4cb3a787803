/**
 * @module @farm/queue
 * What scheduler and workers share through Redis: queue names and the hash-tagged prefix, the Redis
 * connection from REDIS_URL, the episode job payload and result (zod-validated), deterministic job ids,
 * default job options, campaign state keys, and the task check a worker applies to every job.
 *
 *   const queue = new Queue(QUEUE_NAMES.episodes, { connection: redisConnection(config.redisUrl), prefix: resolveQueuePrefix(config.queuePrefix) });
 *   new Worker(QUEUE_NAMES.episodes, async (job) => {
 *     const { data, task } = resolveEpisodeJob(job.data, job.id, tasksById); // throws JobRejectedError
 *     ...; return result satisfies EpisodeJobResult;
 *   }, { connection: redisConnection(config.redisUrl, "blocking"), prefix: resolveQueuePrefix(config.queuePrefix) });
 */
export { QUEUE_NAMES, DEFAULT_QUEUE_PREFIX, resolveQueuePrefix, type QueueName } from "./names.ts";
export { QueueError, JobRejectedError, formatFailureReason, failureCodeOf, type QueueErrorCode } from "./errors.ts";
export {
  DEFAULT_REDIS_URL,
  LINK_TIMEOUTS,
  parseRedisUrl,
  redactRedisUrl,
  redactCredentials,
  redisConnection,
  createRedisClient,
  bullConnection,
  isClusterUrl,
  parseRedisClusterUrl,
  validateRedisUrl,
  type BullConnection,
  type RedisClient,
  type RedisClusterSpec,
  type ConnectionRole,
  type RedisConnectionOptions,
} from "./connection.ts";
export { CAMPAIGN_ID_PATTERN, assertCampaignId, episodeJobId, parseEpisodeJobId, type EpisodeJobRef } from "./ids.ts";
export {
  EPISODE_JOB_VERSION,
  POLICY_SPEC_PATTERN,
  policyRefSchema,
  llmPolicySettingsSchema,
  type LlmPolicySettings,
  episodeOptionsSchema,
  episodeJobDataSchema,
  episodeJobResultSchema,
  parseEpisodeJob,
  parseEpisodeJobResult,
  goalSchema,
  gameConfigSchema,
  gameConfigProblem,
  GOAL_MAX_CHARS,
  GAME_CONFIG_MAX_CHARS,
  type EpisodeJobData,
  type EpisodeJobResult,
  type EpisodeOptions,
  type PolicyRef,
} from "./episode-job.ts";
export {
  DEFAULT_EPISODE_ATTEMPTS,
  defaultEpisodeJobOptions,
  CAMPAIGN_PRIORITY_MAX,
  DEFAULT_CAMPAIGN_PRIORITY,
  bullPriority,
  retryBullPriority,
  prioritizeRetry,
} from "./job-options.ts";
export { campaignKeys, campaignIndexKey, activeCampaignsKey, type CampaignKeys } from "./campaign-keys.ts";
export { resolveEpisodeJob, type TaskIdentity } from "./task-check.ts";
export {
  RedisCommitArbiter,
  commitKeys,
  commitStatsOf,
  jobLockKey,
  episodeClaimSchema,
  type CommitArbiter,
  type EpisodeClaim,
  type EpisodeRef,
  type ClaimOwner,
  type ClaimOutcome,
  type CommitCounter,
  type CommitStats,
} from "./commit-claims.ts";
export { LuaScript } from "./lua-script.ts";
export { RedisHealth, checkRedisAccess, isConnectionError, isAccessError, type RedisHealthEvents } from "./redis-health.ts";
export { EpisodeJobWorker, EpisodeQueue, TolerantJob, UnparseablePayload, MAX_JOB_PAYLOAD_CHARS } from "./tolerant-job.ts";
export { BurstFetchWorker, MAX_FETCH_BURST, type BurstFetchHooks } from "./burst-fetch-worker.ts";
export { jobIdForMessage } from "./episode-job.ts";
export {
  DEVICE_BEAT_VERSION,
  DEVICE_SERIAL_PATTERN,
  WORKER_NAME_PATTERN,
  MAX_BEAT_CHARS,
  deviceBeatSchema,
  deviceBeatKeys,
  boundBeat,
  publishDeviceBeats,
  removeDeviceBeats,
  readDeviceBeats,
  type DeviceBeat,
} from "./device-heartbeats.ts";
