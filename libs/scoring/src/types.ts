/**
 * The contract between an episode and whatever sets up and scores its task instance: a family's declarative
 * checks (this lib) or outside task code behind the task protocol (`@farm/task-protocol`). The episode runner
 * (`@farm/episode`) sees only `TaskInstance`; the composition roots (worker, `farm run`) build one per episode.
 */
import type { ScreenTree, ScreenTreeFailure, ShellResult, StepResult } from "@farm/adb";
import type { AdbRequest, TaskParams } from "@farm/task";

/** What task code may do on the episode's device, and only there: bounded, timed, never throws (trouble is data). */
export interface DeviceCalls {
  /** One AndroidEnv `AdbRequest` (the setup steps' vocabulary) with its own deadline (`timeoutSec`, else `timeoutMs`, else the driver's). */
  execute(request: AdbRequest, opts?: { timeoutMs?: number }): Promise<StepResult>;
  /** One device shell command line exactly as given: quote what you build (`@farm/shell-words`). */
  shell(commandLine: string, opts?: { timeoutMs?: number }): Promise<ShellResult>;
  /** The screen as a tree, as the episode reads it for a policy. */
  screenTree(): Promise<ScreenTree | ScreenTreeFailure>;
}

/** One check's verdict and what it saw; recorded per episode in the trajectory and the data set. */
export interface CheckResult {
  /** The check's `name:` or `checks[i] <source kind>`. */
  name: string;
  /** The source kind (`shell`, `setting`, `file`, `sql`, `tree`, `activity`, `answer`) or `remote` for a task server's. */
  kind: string;
  passed: boolean;
  /** What was read from the device (at most 1024 characters, cut with "…"); "" when nothing was read. */
  observed: string;
  /** What it was compared with, rendered (e.g. `== "1"`, `regex ^on$`, `exists`). */
  expected: string;
  /** Why the check could not run (adb failed, timed out, database unreadable); then `passed` is false and the score is an error. */
  error?: string;
}

export interface TaskScore {
  /** 0..1; undefined when `error` is set. */
  success?: number;
  /** The reward this score adds to the episode's last step (the family's `reward` × success; a task server's value). */
  reward: number;
  checks: CheckResult[];
  /** Set when the score could not be computed (a check that could not run, a task server that failed): never a silent 0. */
  error?: string;
}

/** Episode identity a task instance is drawn for: the same `index` and `seed` on every retry and every host. */
export interface InstanceKey {
  campaignId?: string;
  index: number;
  seed: number;
  /** Parameters the campaign fixed for this episode (`--goals` lines' `params`); the rest are drawn. */
  fixedParams?: TaskParams;
  /** The campaign's goal for this episode, when it gave one (else the family renders its template). */
  goal?: string;
}

/** An episode's task instance: set up after the task's reset steps, scored during and after the episode. */
export interface TaskInstance {
  /** 0: scored at the end only; N: also after every N-th step (success = 1 ends the episode as `goal_reached`). */
  readonly everySteps: number;
  /**
   * After the task's reset steps, before the first observation: puts the device into the instance's start state.
   * Resolves with the goal and parameters; rejects (an Error saying where and why) when the set-up failed, which
   * ends the episode as `reset_failed`.
   */
  initialize(device: DeviceCalls, signal: AbortSignal): Promise<{ goal: string; params: TaskParams }>;
  /** Reads the device's state. `final`: the end-of-episode score (else a mid-episode one). Never rejects: trouble is `error`. */
  score(device: DeviceCalls, ctx: { answer?: string; final: boolean }, signal: AbortSignal): Promise<TaskScore>;
  /** Releases what the instance holds (a task server's session). Idempotent. */
  close(): Promise<void>;
}
