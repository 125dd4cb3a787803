/**
 * Histogram buckets, chosen per quantity (prom-client's defaults, 5 ms…10 s, fit HTTP requests only).
 */

/** Episodes: 1 s … 512 s, doubling. */
export const EPISODE_DURATION_BUCKETS_SEC = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/** Steps per episode: 1 … 4096, doubling. */
export const EPISODE_STEPS_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];

/** One step phase (policy, action, observation, log wait): 0.5 ms … 5 s. */
export const STEP_PHASE_BUCKETS_SEC = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** One adb call: 1 ms … 60 s (installs and boots are slow). */
/** farm_step_settle_seconds: a screen still at once … AndroidWorld's 2 s + reads … the caps (6 s by default, 60 s at most). */
export const SETTLE_BUCKETS_SEC = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 4, 6, 10, 30, 60];

export const ADB_CALL_BUCKETS_SEC = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Enqueue-to-start latency of a job: 10 ms … 1 h. */
export const JOB_START_LATENCY_BUCKETS_SEC = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];

/** Episode reward: task-dependent, so a wide symmetric-ish default; override per deployment. */
export const REWARD_BUCKETS = [-100, -10, -1, 0, 1, 10, 100, 1000, 10000];

/** One policy answer as the policy timed it (a model's, retries included): 10 ms … 2 min. */
export const POLICY_LATENCY_BUCKETS_SEC = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
