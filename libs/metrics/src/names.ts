/**
 * Every farm metric name, in one place for dashboards, alerts and tests.
 * Prometheus naming: `farm_` prefix, base unit as suffix, counters end in `_total`.
 */
export const METRIC = {
  episodes: "farm_episodes_total",
  episodeOrigins: "farm_episode_origins_total",
  episodeDuration: "farm_episode_duration_seconds",
  episodeSteps: "farm_episode_steps",
  steps: "farm_steps_total",
  episodeReward: "farm_episode_reward",
  extrasDropped: "farm_extras_dropped_total",
  logLinesMalformed: "farm_log_lines_malformed_total",
  stepPhaseDuration: "farm_step_phase_duration_seconds",
  policyErrors: "farm_policy_errors_total",
  policyRequests: "farm_policy_requests_total",
  policyBatchSize: "farm_policy_batch_size",
  adbCalls: "farm_adb_calls_total",
  adbErrors: "farm_adb_errors_total",
  adbCallDuration: "farm_adb_call_duration_seconds",
  devices: "farm_devices",
  recoveries: "farm_recoveries_total",
  deviceTransports: "farm_device_transports",
  snapshotFallbacks: "farm_snapshot_reset_fallbacks_total",
  emulatorRelaunches: "farm_emulator_relaunches_total",
  trajectoryBytes: "farm_trajectory_bytes_total",
  trajectoryFiles: "farm_trajectory_files_total",
  campaignsSubmitted: "farm_campaigns_submitted_total",
  jobsEnqueued: "farm_jobs_enqueued_total",
  jobStartLatency: "farm_job_start_latency_seconds",
  jobFetchBurst: "farm_job_fetch_burst_jobs",
  queueJobs: "farm_queue_jobs",
  commits: "farm_commits_total",
  filesQuarantined: "farm_commit_files_quarantined_total",
  episodeRetries: "farm_episode_retries_total",
  redisUp: "farm_redis_up",
  redisOutages: "farm_redis_outages_total",
  labelOverflow: "farm_metric_label_overflow_total",
  invalidValues: "farm_metric_invalid_values_total",
  collectErrors: "farm_metrics_collect_errors_total",
  buildInfo: "farm_build_info",
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];
