/**
 * @module @farm/queue/testing
 * What only this package's own tests use (internals they check one by one); not part of the public API
 * (`@farm/queue`), and imported by no production code (`.ci/test-subpaths.test.ts`).
 */
export { parseRedisUrl, isClusterUrl, parseRedisClusterUrl } from "./connection.ts";
export { parseEpisodeJob } from "./episode-job.ts";
export { GOAL_MAX_CHARS, GAME_CONFIG_MAX_CHARS } from "./goals.ts";
export { MAX_BEAT_CHARS, deviceBeatKeys } from "./device-heartbeats.ts";
