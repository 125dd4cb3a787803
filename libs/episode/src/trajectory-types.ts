/**
 * What one finished episode looks like when the runner hands it to a sink. Free of Avro and Redis:
 * `@farm/trajectory` turns it into records, `services/worker` adds the job identity.
 */
import type { Action, ExtraValue, GoalStatus, ResolvedUiAction, UiElement } from "@farm/policy";
import type { DataType, TaskParams } from "@farm/task";
import type { CheckResult } from "@farm/scoring";
import type { EffectiveEpisodeLimits } from "./episode-limits.ts";

/** Termination = the task said the episode ended; truncation = the farm stopped it. */
export type EpisodeOutcome = "terminated" | "truncated";

/** Why an episode ended. Bounded set: used as a metric label. */
export type EndCause =
  | "episode_end" // termination: an episode_end regex matched
  | "step_limit" // max_episode_steps exceeded
  | "time_limit" // max_episode_sec exceeded
  | "app_left" // expected app screen check failed
  | "reset_failed" // a reset step failed
  | "action_failed" // sending an action failed
  | "observation_failed" // screenshot / orientation failed
  | "device_hung" // a per-step deadline passed
  | "device_lost" // the device disappeared
  | "policy_failed" // the policy threw or timed out
  | "cancelled" // the caller aborted (e.g. worker drain)
  | "agent_status" // termination: the agent answered `status` (complete or infeasible); the task's reward still says whether it succeeded
  | "invalid_actions" // the policy's invalid answers reached the episode's limit
  | "goal_reached" // termination: a mid-episode score of the task instance said success = 1 (checks.every_steps)
  | "observation_budget" // the recorded observations reached the episode's byte budget (onExceeded: end)
  | "stale_policy" // the policy's versions spanned or lagged more than the campaign's max staleness (when set to end)
  | "operator_abandoned"; // a human operator left (past the grace period) or idled past the limit; not the device's fault

export interface StepExtra {
  name: string;
  dtype: DataType;
  shape: number[];
  value: ExtraValue["value"];
}

/**
 * The screen as recorded: the tree in its compact versioned form (ui-elements.ts, `A11Y_TREE_VERSION`) and the
 * element list derived from it, indexed as the policy was shown it.
 */
export interface A11yObservation {
  tree: string;
  elements: UiElement[];
}

/** A step whose answer was not an AndroidEnv touch: the answer as given, what it did on the device, or why it was invalid. */
export interface UiStepRecord {
  /** The answer as the policy gave it (a model's text, or the JSON it sent). */
  given: string;
  /** The AndroidWorld JSON action read from it (compact JSON), when it was a valid one. */
  action?: string;
  resolved?: ResolvedUiAction;
  invalid?: string;
}

export interface StepRecord {
  /** 1-based step index. */
  index: number;
  /** Milliseconds since the end of the reset. */
  timeOffsetMs: number;
  action: Action;
  reward: number;
  extras: StepExtra[];
  /** The observation that followed the action, encoded as the trajectory's `frameEncoding` says, when frames are recorded for this step. */
  frame?: Uint8Array;
  /** The screen as a tree after the action, on every `a11yEvery`-th step (same rule as `frame`). */
  a11y?: A11yObservation;
  /** Set when the answer was a UI action or invalid (then `action` is REPEAT: nothing was touched as AndroidEnv's finger). */
  ui?: UiStepRecord;
  // ---- optional, added by issues 36–38 (schema v5) ----
  /** How long the step waited for the screen to settle after its action, before its observation (ms). */
  settleMs?: number;
  /** The settle policy gave up at its cap (the screen never settled); the observation was taken anyway. */
  settleCapped?: boolean;
  /** The policy version that chose this step's answer, when the policy reports one. */
  policyVersion?: string;
  /** How long the policy (a program or a human operator) took to answer (ms). */
  policyMs?: number;
  /** A per-step instruction that went with the answer (AndroidControl's), when given. */
  instruction?: string;
  /** Result of the expected-app-screen check taken at this step, when one was due (added by issue 5). */
  appScreen?: "SUCCESS" | "EMPTY_EXPECTED_ACTIVITY" | "FAILED_ACTIVITY_EXTRACTION" | "UNEXPECTED_ACTIVITY" | "UNEXPECTED_VIEW_HIERARCHY";
}

export interface EpisodeTrajectory {
  taskId: string;
  taskHash: string;
  deviceSerial: string;
  policyName: string;
  policyVersion: string;
  seed: number;
  startedAt: Date;
  endedAt: Date;
  outcome: EpisodeOutcome;
  cause: EndCause;
  /** Human-readable detail of the cause (e.g. the failing step's message). */
  causeDetail: string;
  totalReward: number;
  steps: StepRecord[];
  /** Counted problems: malformed log lines, extras dropped by extras_spec, … */
  counters: Record<string, number>;
  // ---- optional, added by issue 5 (additive) ----
  /** Index of the episode in its run (the `index` given to runEpisode). */
  episodeIndex?: number;
  /** Dialect the task file was written in. */
  dialect?: "seed-2021" | "internal-2021" | "current";
  /** Extras logged between the end of the reset and the first observation (they travel with FIRST). */
  initialExtras?: StepExtra[];
  /** The last `score:` value the app logged during the episode (when the task parses scores). */
  finalScore?: number;
  /** The limits this episode ran with: `runEpisode`'s `limits` over the task's and the session config's. */
  limits?: EffectiveEpisodeLimits;
  // ---- optional, added by issue 10 (additive) ----
  /** How the steps' frames are encoded (`png`, `jpeg:85`, `webp:80@540x960`, …), when frames were recorded. */
  frameEncoding?: string;
  /**
   * How the device was reset: the reset steps alone, a setup snapshot load + reset steps, a start snapshot load
   * (no reset steps), or the full setup + reset steps after a failed load.
   */
  resetKind?: "steps" | "snapshot" | "start_snapshot" | "snapshot_fallback";
  /** How long the reset took (ms), snapshot load or setup included. */
  resetMs?: number;
  // ---- optional, added by issue 28 (agent episodes) ----
  /** The episode's goal: the campaign's for this episode, else the task's description. */
  goal?: string;
  /** Record the screen as a tree every N steps (0: never); the FIRST observation's goes into `initialA11y`. */
  a11yEvery?: number;
  /** The FIRST observation's frame (what step 1's action was chosen on), when frames are recorded. */
  initialFrame?: Uint8Array;
  /** The FIRST observation's tree and elements, when a11y is recorded. */
  initialA11y?: A11yObservation;
  /** What the agent declared with a `status` action (the last one). */
  agentStatus?: GoalStatus;
  /** The agent's `answer` text (the last one). */
  answer?: string;
  /** Answers recorded as invalid. */
  invalidActions?: number;
  // ---- optional, added by issue 41 (scored by the device) ----
  /** The task instance's parameters (a family's, drawn or fixed; a task server's). */
  params?: TaskParams;
  /** 0..1 from the task instance's final score; absent when the task has none or the score was an error. */
  success?: number;
  /** Each check's verdict and observed value, from the final score. */
  checks?: CheckResult[];
  /** Why the final score could not be computed (then `success` is absent). */
  scoreError?: string;
  // ---- optional, added by issues 36–38 (schema v5) ----
  /** The settle policy the steps observed with, as its spec (`none`, `fixed:500`, `androidworld`, `events`, …). */
  settle?: string;
  /** GRPO-style groups: the task instance's index (the group), this episode's member index and the group's size K. */
  groupIndex?: number;
  groupMember?: number;
  groupSize?: number;
  /** The policy versions of the first and the last step that reported one. */
  firstPolicyVersion?: string;
  lastPolicyVersion?: string;
  /** Why the episode is too stale for a learner (its versions span or lag more than the campaign allows). */
  stale?: string;
}
