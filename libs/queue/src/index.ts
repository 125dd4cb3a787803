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
  redisConnection,
  createRedisClient,
  bullConnection,
  validateRedisUrl,
  type BullConnection,
  type RedisClient,
  type RedisClusterSpec,
  type ConnectionRole,
  type RedisConnectionOptions,
} from "./connection.ts";
export { redactRedisUrl, redactCredentials } from "./credentials.ts";
export {
  operatorKeys,
  waitingEpisodeSchema,
  operatorActionBodySchema,
  LEASE_SCRIPT,
  RELEASE_SCRIPT,
  OPERATOR_NAME_PATTERN,
  OPERATOR_EPISODE_PATTERN,
  MAX_WAITING_LISTED,
  MAX_ACTION_MESSAGE_CHARS,
  OPERATOR_STATE_TTL_MS,
  type WaitingEpisode,
  type OperatorActionBody,
  type OperatorActionMessage,
  type OperatorEvent,
} from "./operator-relay.ts";
export { CAMPAIGN_ID_PATTERN, episodeJobId, parseEpisodeJobId, type EpisodeJobRef } from "./ids.ts";
export {
  EPISODE_JOB_VERSION,
  policyRefSchema,
  llmPolicySettingsSchema,
  type LlmPolicySettings,
  episodeOptionsSchema,
  parseEpisodeJobResult,
  MAX_GROUP_SIZE,
  type EpisodeJobData,
  type EpisodeJobResult,
  type EpisodeOptions,
  type PolicyRef,
} from "./episode-job.ts";
export {
  goalSchema,
  gameConfigSchema,
  gameConfigProblem,
  paramsSchema,
  paramsProblem,
  PARAMS_MAX,
  PARAM_VALUE_MAX_CHARS,
  goalForEpisode,
  type EpisodeGoal,
} from "./goals.ts";
export {
  defaultEpisodeJobOptions,
  CAMPAIGN_PRIORITY_MAX,
  DEFAULT_CAMPAIGN_PRIORITY,
  bullPriority,
  prioritizeRetry,
} from "./job-options.ts";
export { campaignKeys, campaignIndexKey, activeCampaignsKey, type CampaignKeys } from "./campaign-keys.ts";
export { resolveEpisodeJob, type TaskIdentity } from "./task-check.ts";
export {
  RedisCommitArbiter,
  commitKeys,
  commitStatsOf,
  jobLockKey,
  type CommitArbiter,
  type EpisodeClaim,
  type EpisodeRef,
  type ClaimOwner,
  type ClaimOutcome,
  type CommitCounter,
  type CommitStats,
} from "./commit-claims.ts";
export { LuaScript } from "./lua-script.ts";
export { RedisHealth, checkRedisAccess, type RedisHealthEvents } from "./redis-health.ts";
export { EpisodeJobWorker, EpisodeQueue, UnparseablePayload } from "./tolerant-job.ts";
export { BurstFetchWorker, type BurstFetchHooks } from "./burst-fetch-worker.ts";
export {
  DEVICE_BEAT_VERSION,
  DEVICE_SERIAL_PATTERN,
  WORKER_NAME_PATTERN,
  publishDeviceBeats,
  removeDeviceBeats,
  readDeviceBeats,
  type DeviceBeat,
} from "./device-heartbeats.ts";
export {
  MAX_CAMPAIGN_VERSIONS,
  policyVersionSchema,
  raiseVersionInputSchema,
  stalenessOptionSchema,
  policyVersionsKey,
  raisePolicyVersion,
  readPolicyVersions,
  type RaisedVersion,
} from "./policy-versions.ts";
export {
  DEFAULT_STREAM_MAXLEN,
  DEFAULT_STREAM_MAX_AGE_MS,
  STREAM_NAME_PATTERN,
  EpisodeStreamConsumer,
  episodeStreamKey,
  parseStreamFields,
  streamFields,
  streamGroups,
  type EpisodeStreamMessage,
  type StreamEntry,
  type StreamGroupInfo,
  type StreamTrim,
} from "./episode-stream.ts";
