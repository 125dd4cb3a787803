/**
 * The closed label vocabularies. Where another library owns the set (episode outcomes and causes,
 * adb statuses, policy error codes) the `satisfies Record<…, true>` lists make a new or renamed value
 * there a type error here, so the metrics never silently drift into "other".
 */
import type { ForwarderRefusal, StepStatus } from "@farm/adb";
import type { EndCause, EpisodeOutcome } from "@farm/episode";
import type { PolicyErrorCode } from "@farm/policy";
import type { RelaunchCause } from "@farm/emulator-launcher";

/** The value a label takes when the caller passes something outside its bounded set. */
export const OTHER = "other";

const outcomes = { terminated: true, truncated: true } satisfies Record<EpisodeOutcome, true>;
export const OUTCOMES = Object.keys(outcomes) as EpisodeOutcome[];

const causes = {
  episode_end: true,
  step_limit: true,
  time_limit: true,
  app_left: true,
  reset_failed: true,
  action_failed: true,
  observation_failed: true,
  device_hung: true,
  device_lost: true,
  policy_failed: true,
  cancelled: true,
  agent_status: true,
  invalid_actions: true,
  goal_reached: true,
  observation_budget: true,
  stale_policy: true,
  operator_abandoned: true,
} satisfies Record<EndCause, true>;
export const END_CAUSES = Object.keys(causes) as EndCause[];

/**
 * The (outcome, cause) pairs of farm_episodes_total that `declareTask` creates at 0 for a task, so
 * rate()/increase() see their first episode: the common ends (the task's own end; the step limit, time
 * limit and app-left truncations) and the device-trouble causes the worker retries (DEVICE_TROUBLE of
 * @farm/episode; committed on a job's last attempt). Not all 22 combinations: every cause but
 * episode_end truncates, so the other outcome/cause pairs never occur; a cancelled episode is never
 * committed (handed back or retried); policy_failed is left to appear on its own. 9 series per task.
 */
export const DECLARED_EPISODE_ENDS = [
  ["terminated", "episode_end"],
  ["truncated", "step_limit"],
  ["truncated", "time_limit"],
  ["truncated", "app_left"],
  ["truncated", "reset_failed"],
  ["truncated", "action_failed"],
  ["truncated", "observation_failed"],
  ["truncated", "device_hung"],
  ["truncated", "device_lost"],
] as const satisfies readonly (readonly [EpisodeOutcome, EndCause])[];

/** A step's phases; `a11y_read` (the device's tree) and `a11y_derive` (the farm's work on it) lie within `observation`, `step` is the whole step. */
export const STEP_PHASES = ["policy", "action", "observation", "log", "a11y_read", "a11y_derive", "step"] as const;
export type StepPhase = (typeof STEP_PHASES)[number];

const statuses = {
  ok: true,
  adb_error: true,
  timeout: true,
  failed_precondition: true,
  internal_error: true,
  unknown_command: true,
} satisfies Record<StepStatus, true>;
export const ADB_STATUSES = Object.keys(statuses) as StepStatus[];

const policyCodes = {
  timeout: true,
  http_status: true,
  bad_response: true,
  unreachable: true,
  aborted: true,
  bad_spec: true,
  bad_script: true,
  bad_module: true,
  bad_action: true,
  closed: true,
  url_not_allowed: true,
  server_error: true,
  operator_abandoned: true,
} satisfies Record<PolicyErrorCode, true>;
export const POLICY_ERROR_CODES = Object.keys(policyCodes) as PolicyErrorCode[];

/** BullMQ job states (Queue.getJobCounts). */
export const QUEUE_STATES = ["waiting", "active", "delayed", "prioritized", "waiting-children", "paused", "completed", "failed"] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

/** How one attempt's commit went (farm_commits_total{result}); see services/worker/README.md. */
export const COMMIT_RESULTS = ["committed", "duplicate_prevented", "completed_from_claim", "lock_lost"] as const;
export type CommitResult = (typeof COMMIT_RESULTS)[number];

/** Why an episode job is tried again (farm_episode_retries_total{cause}): the worker's retryable codes, lower-cased, and stalls. */
export const RETRY_CAUSES = ["device_trouble", "device_unusable", "policy_failed", "cancelled", "lock_lost", "stalled", "operator_abandoned"] as const;

/** How a device's actions travel (farm_device_transports{transport}): the emulator's gRPC or the adb server. */
export const TRANSPORTS = ["grpc", "adb"] as const;
export type Transport = (typeof TRANSPORTS)[number];

/** How an episode was asked to start (farm_episode_resets_total{mode}): the campaign's `--reset`. */
export const RESET_MODES = ["steps", "setup-snapshot", "start-snapshot"] as const;
export type ResetModeLabel = (typeof RESET_MODES)[number];
/** How it did start (farm_episode_resets_total{kind}): the trajectory's `resetKind`. */
export const RESET_KINDS = ["steps", "snapshot", "start_snapshot", "snapshot_fallback"] as const;
export type ResetKindLabel = (typeof RESET_KINDS)[number];

/** Why the worker relaunched an emulator it launched (farm_emulator_relaunches_total{cause}). */
const relaunchCauses = { exited: true, hung: true, boot_timeout: true } satisfies Record<RelaunchCause, true>;
export const RELAUNCH_CAUSES = Object.keys(relaunchCauses) as RelaunchCause[];
export type { RelaunchCause };

/** What a UI action came to (its resolved op), or `invalid`: the label of farm_ui_actions_total. */
/** The settle policies' kinds (@farm/episode SETTLE_KINDS): farm_step_settle_seconds' and farm_step_settles_capped_total's `policy`. */
export const SETTLE_POLICY_KINDS = ["none", "fixed", "androidworld", "events", "frames"] as const;

export const UI_ACTION_OPS = ["tap", "double_tap", "long_press", "type", "key", "swipe", "open_app", "wait", "status", "answer", "invalid"] as const;

/** Where a screen tree came from, and what became of the read (@farm/adb's ScreenTreeOutcome): farm_screen_tree_reads_total's labels. */
export const SCREEN_TREE_SOURCES = ["uiautomator", "forwarder"] as const;
export const SCREEN_TREE_OUTCOMES = ["ok", "not_idle", "refused", "timeout", "adb_error", "failed"] as const;
/** Why the accessibility hub refused a forwarder stream (@farm/adb ForwarderRefusal). */
export const A11Y_FORWARDER_REFUSALS = ["unknown_port", "bad_token", "token_missing", "duplicate"] as const satisfies readonly ForwarderRefusal[];
/**
 * Why a device's trees came from uiautomator although the worker was set to read them from the forwarder
 * (`--trees`): the package absent (`auto` installs nothing), no APK to install, the install or the enabling
 * broadcasts failed, no stream came, a stream that dropped did not come back.
 */
export const A11Y_FORWARDER_FALLBACKS = ["not_installed", "apk_missing", "install_failed", "enable_failed", "no_stream", "stream_lost"] as const;

/** farm_groups_total{result}: how a group of a grouped campaign finished (issue 38). */
export const GROUP_RESULTS = ["complete", "uniform", "resampled", "failed"] as const;
