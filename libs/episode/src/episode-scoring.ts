/**
 * An episode's task instance (`RunEpisodeOptions.instance`, @farm/scoring): initialised after the reset steps (its
 * goal and parameters become the episode's), scored every `everySteps` steps (success 1 ends the episode as
 * `goal_reached`) and at the end (its reward goes to the last step; success, checks, error and parameters into
 * the trajectory). A scoring error is counted and logged once per episode, never read as a 0. Always closed.
 */
import type { DeviceCalls, TaskInstance, TaskScore } from "@farm/scoring";
import type { TaskParams } from "@farm/task";
import { withDeadline } from "./deadline.ts";
import { coerceError } from "./errors.ts";
import type { SessionPort } from "./session-port.ts";
import type { EndCause, EpisodeTrajectory } from "./trajectory-types.ts";

/** Ends after which the device cannot answer checks: the final score is not attempted (recorded as its error). */
const UNSCORABLE: ReadonlySet<EndCause> = new Set<EndCause>(["device_lost", "device_hung", "reset_failed", "cancelled"]);

/** What the final score leaves in the trajectory. */
export type ScoreFields = Pick<EpisodeTrajectory, "params" | "success" | "checks" | "scoreError">;

export class EpisodeScoring {
  private params: TaskParams | undefined;
  private initialized = false;
  private errorLogged = false;
  private closed = false;
  /** Scores taken (mid-episode and final), failed ones, and the final one's duration. */
  readonly counters: Record<string, number> = {};
  final: TaskScore | undefined;
  finalMs = 0;

  private readonly device: DeviceCalls;

  constructor(
    private readonly port: SessionPort,
    private readonly instance: TaskInstance,
    private readonly index: number,
  ) {
    this.device = port.deviceCalls();
  }

  get everySteps(): number {
    const n = this.instance.everySteps;
    return Number.isInteger(n) && n > 0 ? n : 0;
  }

  /** The instance's set-up: its goal and parameters, or why it failed (the episode then ends `reset_failed`). */
  async initialize(signal: AbortSignal): Promise<{ goal: string } | { fail: string }> {
    try {
      const r = await this.instance.initialize(this.device, signal);
      this.params = r.params;
      this.initialized = true;
      return { goal: typeof r.goal === "string" ? r.goal : "" };
    } catch (e) {
      return { fail: `task instance set-up: ${coerceError(e).message}` };
    }
  }

  private async score(final: boolean, answer: string | undefined, signal: AbortSignal): Promise<TaskScore> {
    const t0 = performance.now();
    let s: TaskScore;
    try {
      // The instance bounds its own checks; this bounds an instance that does not (a task server that never answers).
      const r = await withDeadline(this.instance.score(this.device, { final, ...(answer !== undefined ? { answer } : {}) }, signal), this.port.config.resetTimeoutMs);
      s = r.timedOut ? { reward: 0, checks: [], error: `the score did not come in ${this.port.config.resetTimeoutMs} ms` } : r.value;
    } catch (e) {
      s = { reward: 0, checks: [], error: coerceError(e).message };
    }
    const ms = performance.now() - t0;
    if (final) this.finalMs = ms;
    this.bump("instance_scores");
    if (s.error !== undefined) {
      this.bump("instance_score_errors");
      if (!this.errorLogged) {
        this.errorLogged = true;
        this.port.logger.warn({ event: "episode:score-error", index: this.index, final, err: s.error }, "the task instance could not be scored");
      }
    }
    return s;
  }

  /** After step `step`: a mid-episode score when one is due; true when it says the goal is reached. */
  async midEpisode(step: number, answer: string | undefined, signal: AbortSignal): Promise<{ reached: boolean; detail: string }> {
    const n = this.everySteps;
    if (!this.initialized || n === 0 || step % n !== 0) return { reached: false, detail: "" };
    const s = await this.score(false, answer, signal);
    return s.error === undefined && s.success === 1 ? { reached: true, detail: `the task instance scored success 1 at step ${step}` } : { reached: false, detail: "" };
  }

  /** The end-of-episode score (not attempted when the set-up did not run or the device is gone). */
  async finish(cause: EndCause, answer: string | undefined, signal: AbortSignal): Promise<TaskScore | undefined> {
    if (!this.initialized) return undefined;
    if (UNSCORABLE.has(cause)) {
      this.final = { reward: 0, checks: [], error: `not scored: the episode ended ${cause}` };
      this.bump("instance_score_errors");
      return this.final;
    }
    this.final = await this.score(true, answer, signal);
    const s = this.final;
    const result = s.error !== undefined ? "error" : s.success === 1 ? "success" : "failure";
    this.port.logger.info(
      { event: "episode:score", index: this.index, result, success: s.success, reward: s.reward, checks: s.checks.map((c) => `${c.name}=${c.error !== undefined ? "error" : c.passed ? "pass" : "fail"}`), error: s.error, durationMs: Math.round(this.finalMs) },
      "episode scored",
    );
    return s;
  }

  /** The trajectory's issue-41 fields from the final score. */
  fields(): ScoreFields {
    const s = this.final;
    return {
      ...(this.params ? { params: this.params } : {}),
      ...(s && s.error === undefined && s.success !== undefined ? { success: s.success } : {}),
      ...(s && s.checks.length ? { checks: s.checks } : {}),
      ...(s?.error !== undefined ? { scoreError: s.error } : {}),
    };
  }

  private bump(k: string): void {
    this.counters[k] = (this.counters[k] ?? 0) + 1;
  }

  /** Idempotent; an instance that fails to close is logged, never thrown. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      const r = await withDeadline(this.instance.close(), 5000);
      if (r.timedOut) this.port.logger.warn({ event: "episode:instance-close", index: this.index }, "the task instance did not close in 5 s");
    } catch (e) {
      this.port.logger.warn({ event: "episode:instance-close", index: this.index, err: coerceError(e).message }, "the task instance failed to close");
    }
  }
}
