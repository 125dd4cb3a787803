/**
 * One episode on a bound device (task-format.md §7.6, §7.7), as three calls: `reset()`, `step()` until it says
 * the episode is over, `finish()`. The policy chooses from the observation, the action goes out on the action
 * channel, rewards / extras / episode_end come from logcat, the limits decide the boundary. Device trouble (a
 * failing reset step, a failed action or observation, a step past its deadline, a lost device) ends the episode
 * as a truncation with its cause; `finish()` then sends the device through recovery (or, with `deferRecovery`,
 * leaves the session `needs_recovery`). It is never thrown. The run sees its session only through `SessionPort`.
 */
import type { FrameSpec } from "@farm/frames";
import { isPolicyError, readAnswer, repeat, type Action, type GoalStatus, type Observation, type Policy, type PolicyUsage, type ReadAnswer, type StepOutcome, type UiElement } from "@farm/policy";
import { isScreenTree } from "@farm/adb";
import type { AppScreenVerdict } from "./app-screen-monitor.ts";
import { since, withDeadline } from "./deadline.ts";
import type { StepResult } from "@farm/adb";
import { DEVICE_TROUBLE, causeOf, transitionEnd, trunc, type End } from "./episode-end.ts";
import { effectiveLimits, type EffectiveEpisodeLimits, type EpisodeLimitOverrides } from "./episode-limits.ts";
import { adbErrorResult, coerceError } from "./errors.ts";
import type { EpisodeEvent, StepPhasesMs } from "./events.ts";
import { decideTransition } from "./limits.ts";
import type { EpisodeFrames } from "./episode-frames.ts";
import { ObservationBudget } from "./observation-budget.ts";
import { extrasByName } from "./extras.ts";
import { assertCommittable } from "./result-check.ts";
import { episodeEndInfo, markFirst, markMid, tellEpisodeEnd } from "./policy-feedback.ts";
import type { SessionPort } from "./session-port.ts";
import type { ResetKind } from "./snapshot-reset.ts";
import { TaskNotRunnableError } from "./errors.ts";
import { gameConfigRefusal, startSnapshotRefusal, type ResetMode } from "@farm/task";
import { sleep } from "@farm/time";
import type { TaskInstance } from "@farm/scoring";
import { EpisodeScoring } from "./episode-scoring.ts";
import type { A11yObservation, EpisodeTrajectory, StepExtra, StepRecord, UiStepRecord } from "./trajectory-types.ts";
import { compactTree, elementsOf } from "./ui-elements.ts";
import { usageExtras } from "./policy-usage.ts";
import { EpisodePolicyVersions, type StalenessOptions } from "./policy-versions.ts";
import { formatSettleSpec, parseSettleSpec, type SettleSpec } from "./settle-spec.ts";
import { settleScreen, type A11yEventClock, type SettleResult } from "./settle.ts";

export interface RunEpisodeOptions {
  /** Seeds the policy (via reset) and the task's random choices. */
  seed: number;
  /** Seeds the policy alone when given (a GRPO group's members: one instance seed, each member its own sampling). */
  policySeed?: number;
  /** Episode index, for events and the trajectory. */
  index: number;
  policy: Policy;
  /** Receives the finished trajectory before `runEpisode` resolves (and before any recovery). */
  sink?: (trajectory: EpisodeTrajectory) => void | Promise<void>;
  /** Aborting ends the episode at the next step boundary as `cancelled`. */
  signal?: AbortSignal;
  /** Record a frame every N steps; overrides the config's `frameEvery`. */
  frameEvery?: number;
  /** How recorded frames are stored (`png`, `jpeg:85`, `webp:80@540x960`, …); overrides the config's `frameEncoding`. */
  frameEncoding?: FrameSpec;
  /**
   * How the episode starts (README "Reset modes"): `steps`, `setup-snapshot` (snapshot-reset.ts) or `start-snapshot`
   * (start-snapshot.ts; refused for a task whose reset draws from the episode's seed: TaskNotRunnableError).
   * @default "steps", or "setup-snapshot" when the older `resetFromSnapshot` is true
   */
  resetMode?: ResetMode;
  /** The episode's goal, shown to the policy and recorded. @default the task's description */
  goal?: string;
  /** This episode's RL_TASK_GAME_CONFIG (a JSON object) in place of the one the task's start_activity steps pass. */
  gameConfig?: Record<string, unknown>;
  /** Record the screen as a tree every N steps (0: never; the FIRST observation counts as step 0). @default 0 */
  a11yEvery?: number;
  /** Older name of `resetMode: "setup-snapshot"` (jobs queued before reset modes existed). */
  resetFromSnapshot?: boolean;
  /** This episode's step/time limits and step deadline, over the task's and the session config's (this episode only). */
  limits?: EpisodeLimitOverrides;
  /**
   * Device trouble: return at once and leave the session in state `needs_recovery` instead of recovering
   * before returning; the caller runs `session.recover()` when it suits it (e.g. after handing its job back).
   * A `runEpisode` on a session that needs recovery recovers first. @default false
   */
  deferRecovery?: boolean;
  /**
   * The episode's task instance (a family's checks or a task server, `@farm/scoring`): initialised after the reset
   * steps (its goal and parameters are the episode's), scored every `everySteps` steps and at the end; the score's
   * reward is added to the last step, its success and checks are recorded. Closed by the run.
   */
  instance?: TaskInstance;
  /** Staleness of the policy's versions (`--max-staleness`; policy-versions.ts); without it versions are only recorded. */
  staleness?: StalenessOptions;
  /**
   * How each step waits for the screen to settle after its action, before its observation (settle-spec.ts: `none`,
   * `fixed:MS`, `androidworld`, `events[:quiet=MS,cap=MS]`, `frames[:…]`). A bad spec is refused before anything runs.
   * @default none (the observation at once)
   */
  settle?: string;
}

type Observed = { obs: Observation; a11y?: A11yObservation } | { fail: StepResult };

/** What the policy's answer came to before the device work of the step: a touch to send, a UI action, or an invalid answer. */
type Chosen = { answer: ReadAnswer } | End;

/** What one step's device work produced after the action: the observation (or why not) and the app-screen verdict. */
interface StepView {
  /** When the action and the observation began (epoch ms, the host's clock). */
  actedAt?: number;
  observedAt?: number;
  verdict?: AppScreenVerdict;
  fail?: End;
  a11y?: A11yObservation;
}

export class EpisodeRun {
  private readonly policy: Policy;
  private readonly frameEvery: number;
  private readonly frames: EpisodeFrames;
  /** Bytes of recorded trees, frames and answers (observation-budget.ts). */
  private readonly budget: ObservationBudget;
  private resetKind: ResetKind = "steps";
  private readonly resetMode: ResetMode;
  private resetMs = 0;
  private readonly startedAt = new Date();
  private readonly tEpisode = performance.now();
  private readonly steps: StepRecord[] = [];
  private readonly resetCounters: Record<string, number> = {};
  private readonly logcatMalformed0: number;
  private readonly ac = new AbortController();
  private readonly onAbort = () => this.ac.abort();
  /**
   * The policy's signal, one for the whole episode (a controller per step cost ~10 µs at thousands of steps/s):
   * aborted with the run, or at an act's deadline, which ends the episode, so no later act sees it aborted.
   */
  private readonly actAc = new AbortController();
  private initialExtras: StepExtra[] = [];
  private end: End | undefined;
  private obs: Observation | undefined;
  private taskStart = performance.now();
  private lastObsAt = this.taskStart;
  private appScreenChecks = 0;
  private episodeSteps = 0;
  /** The policy was reset for this episode, so it is told when the episode ends. */
  private policyStarted = false;
  private goal: string;
  /** The task instance (opts.instance): its set-up, mid-episode and final scores (episode-scoring.ts). */
  private readonly scoring: EpisodeScoring | undefined;
  /** The settle policy (opts.settle) and, for `events`, the episode's accessibility event stream. */
  private readonly settleSpec: SettleSpec;
  private events: (A11yEventClock & { close(): void }) | undefined;
  private readonly settleTotals = { steps: 0, ms: 0, capped: 0, noEvents: 0 };
  private readonly a11yEvery: number;
  /** The versions the policy's answers reported, and staleness (policy-versions.ts). */
  private readonly versions: EpisodePolicyVersions;
  private readonly runCounters: Record<string, number> = {};
  private previous: StepOutcome | undefined;
  private initialA11y: A11yObservation | undefined;
  private invalidActions = 0;
  private agentStatus: GoalStatus | undefined;
  private answerText: string | undefined;
  /** The latest observation's tree and elements, when it was read as a tree. */
  private lastA11y: A11yObservation | undefined;
  /** The latest tree read's timing, for the step's phases. */
  private a11yTiming: { read: number; derive: number } | undefined;
  /** The current step's deadline for its device work (performance.now() ms), and the time left to it: one bound function, not a closure per step. */
  private stepDeadline = 0;
  private readonly stepLeft = (): number => Math.max(0, this.stepDeadline - performance.now());

  private constructor(
    private readonly port: SessionPort,
    private readonly opts: RunEpisodeOptions,
    private readonly limits: EffectiveEpisodeLimits,
  ) {
    this.policy = opts.policy;
    this.resetMode = resetModeOf(opts);
    this.frameEvery = opts.frameEvery ?? port.config.frameEvery;
    this.goal = opts.goal ?? port.task.task.description ?? "";
    this.scoring = opts.instance ? new EpisodeScoring(port, opts.instance, opts.index) : undefined;
    this.settleSpec = opts.settle !== undefined ? parseSettleSpec(opts.settle, "settle") : { kind: "none" };
    this.a11yEvery = opts.a11yEvery ?? 0;
    this.ac.signal.addEventListener("abort", () => this.actAc.abort(this.ac.signal.reason), { once: true });
    this.versions = new EpisodePolicyVersions(opts.staleness);
    this.frames = port.frames(opts.frameEncoding);
    this.budget = new ObservationBudget(limits.observationBudget, () => this.frames.recordedBytes);
    this.logcatMalformed0 = port.logcatMalformedLines() ?? 0;
    opts.signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  /** Checks the options (a bad override is the caller's error: RangeError before anything runs) and the session's readiness. */
  static async start(port: SessionPort, opts: RunEpisodeOptions): Promise<EpisodeRun> {
    try {
      return await EpisodeRun.open(port, opts);
    } catch (e) {
      // The run never started: its task instance is closed here (a started run closes it in finish()).
      await opts.instance?.close().catch(() => undefined);
      throw e;
    }
  }

  private static async open(port: SessionPort, opts: RunEpisodeOptions): Promise<EpisodeRun> {
    const limits = effectiveLimits(port.task.task, port.config, opts.limits, opts.policy);
    if (opts.settle !== undefined) parseSettleSpec(opts.settle, "settle");
    if (resetModeOf(opts) === "start-snapshot") {
      const refused = startSnapshotRefusal(port.task.task);
      if (refused) throw new TaskNotRunnableError(refused);
    }
    const gameRefused = opts.gameConfig ? gameConfigRefusal(port.task.task, resetModeOf(opts)) : undefined;
    if (gameRefused) throw new TaskNotRunnableError(gameRefused);
    await port.ensureReady();
    return new EpisodeRun(port, opts, limits);
  }

  /** True once the episode has ended (after a failed reset, or a step that was LAST). */
  get ended(): boolean {
    return this.end !== undefined || this.obs === undefined;
  }

  /** The latest observation (after the reset, then after each step); for a caller that drives the steps itself (dm_env_rpc). */
  get observation(): Observation | undefined {
    return this.obs;
  }

  /** The latest observation's tree and elements, when that observation read the screen as a tree (recorded or not). */
  get observedA11y(): A11yObservation | undefined {
    return this.lastA11y;
  }

  /** Steps recorded so far; the last one's reward is final once `finish()` has drained late lines. */
  get recordedSteps(): readonly StepRecord[] {
    return this.steps;
  }

  // ---- reset (§7.6) ----

  /** Runs the reset within its deadline and emits `episode:start`; a failure ends the episode (never throws). */
  async reset(): Promise<void> {
    const c = this.port.config;
    this.port.logger.debug({ event: "episode:reset", index: this.opts.index, seed: this.opts.seed }, "reset");
    const tReset = performance.now();
    try {
      const r = await withDeadline(this.resetSteps(), c.resetTimeoutMs);
      if (r.timedOut) {
        this.ac.abort();
        this.end = trunc("device_hung", `reset did not finish in ${c.resetTimeoutMs} ms`);
      } else this.end = r.value;
    } catch (e) {
      this.end = trunc("reset_failed", `reset: ${coerceError(e).message}`);
    }
    const resetMs = performance.now() - tReset;
    this.resetMs = resetMs;
    this.port.resetDone();
    for (const [k, v] of Object.entries(this.resetCounters)) this.port.count(k, v);
    const p = this.port;
    p.emit({ type: "episode:start", serial: p.serial, taskId: p.task.task.id, episodeIndex: this.opts.index, seed: this.opts.seed, resetMs, resetMode: this.resetMode, resetKind: this.resetKind });
  }

  private async resetSteps(): Promise<End | undefined> {
    const p = this.port;
    await p.liftFinger();
    // The events policy listens from the start: the device's event command has time to come up during the reset.
    if (this.settleSpec.kind === "events" && !this.events) this.events = await p.openA11yEvents();
    const ran = await p.runResetSteps(this.opts.seed, this.resetCounters, this.ac.signal, this.resetMode, this.opts.gameConfig);
    if ("fail" in ran) return trunc("reset_failed", ran.fail);
    this.resetKind = ran.kind;
    const stepsOk = ran.steps;
    if (!stepsOk.ok) {
      return trunc(stepsOk.status === "cancelled" ? "cancelled" : "reset_failed", `reset step ${stepsOk.stepIndex + 1} (line ${stepsOk.line}): ${stepsOk.message}`);
    }
    if (this.scoring) {
      const init = await this.scoring.initialize(this.ac.signal);
      if ("fail" in init) return trunc("reset_failed", init.fail);
      if (init.goal !== "") this.goal = init.goal;
    }
    this.taskStart = performance.now();
    this.lastObsAt = this.taskStart;
    p.startAppScreenChecks(this.taskStart);
    const o = await p.readOrientation();
    if (o) return trunc(causeOf(o.status, "observation_failed"), `orientation at reset: ${o.status}: ${o.message}`);
    const first = await this.observe(0, this.frameEvery > 0);
    if ("fail" in first) return trunc(causeOf(first.fail.status, "observation_failed"), `first observation: ${first.fail.status}: ${first.fail.message}`);
    this.obs = first.obs;
    this.initialA11y = first.a11y;
    return this.resetPolicy(first.obs);
  }

  private async resetPolicy(obs: Observation): Promise<End | undefined> {
    const ms = this.limits.policyTimeoutMs;
    try {
      const r = await withDeadline(this.policy.reset({ seed: this.opts.policySeed ?? this.opts.seed, episodeIndex: this.opts.index, screen: { ...this.port.screen() }, goal: this.goal }), ms);
      if (r.timedOut) return trunc("policy_failed", `policy.reset did not finish in ${ms} ms (the policy deadline)`);
    } catch (e) {
      return trunc("policy_failed", `policy.reset: ${coerceError(e).message}`);
    }
    // Extras logged since the reset travel with FIRST; FIRST's reward is 0 and what was logged so far counts for step 1.
    this.initialExtras = this.port.log.takeExtras();
    obs.extras = extrasByName(this.initialExtras);
    markFirst(obs);
    this.policyStarted = true;
    return undefined;
  }

  /**
   * Observation after an action (or the reset): the screen is taken only when the policy or the trajectory wants
   * it, and read as a tree (alongside) only when the policy needs elements or the step's a11y is recorded.
   */
  private async observe(stepIndex: number, wantFrame: boolean): Promise<Observed> {
    const recordA11y = this.a11yEvery > 0 && stepIndex % this.a11yEvery === 0 && this.budget.admit("trees");
    const [shot, tree] = await Promise.all([
      this.frames.take(stepIndex, this.policy.needsPixels, wantFrame && this.budget.admit("frames")),
      this.policy.needsElements || recordA11y ? this.readElements() : undefined,
    ]);
    if ("fail" in shot) return shot;
    const pixels = shot.pixels;
    const now = performance.now();
    const o: Observation = {
      timedeltaUs: stepIndex === 0 ? 0 : Math.round((now - this.lastObsAt) * 1000),
      orientation: this.port.orientation(),
      extras: {},
      stepIndex,
      screen: { ...this.port.screen() },
      goal: this.goal,
      ...(pixels ? { pixels } : {}),
      ...(tree ? { elements: tree.elements } : {}),
      ...(this.previous ? { previous: this.previous } : {}),
    };
    this.lastObsAt = now;
    this.lastA11y = tree;
    if (tree && recordA11y) this.budget.addTree(tree);
    return { obs: o, ...(tree && recordA11y ? { a11y: tree } : {}) };
  }

  /** The screen as elements (and its compact tree); a failed read is counted and leaves the observation without elements. */
  private async readElements(): Promise<A11yObservation | undefined> {
    const t0 = performance.now();
    const t = await this.port.screenTree();
    const t1 = performance.now();
    if (!isScreenTree(t)) {
      this.bump(`a11y_${t.outcome}`);
      return undefined;
    }
    const seen = { tree: compactTree(t), elements: elementsOf(t) };
    this.a11yTiming = { read: t1 - t0, derive: performance.now() - t1 };
    return seen;
  }

  private bump(key: string, by = 1): void {
    this.runCounters[key] = (this.runCounters[key] ?? 0) + by;
  }

  // ---- action loop (§7.7) ----

  /** One step: policy → action → observation (+ app-screen check) → logs → transition. Returns whether another step follows. */
  async step(): Promise<boolean> {
    if (this.ended) return false;
    this.end = this.stopRequested();
    if (this.end) return false;
    const phases: StepPhasesMs = { policy: 0, action: 0, observation: 0, log: 0 };
    const tStep = performance.now();
    let t0 = tStep;
    const chosen = await this.chooseAction();
    if ("cause" in chosen) return this.stop(chosen);
    const answer = chosen.answer;
    phases.policy = since(t0);

    // The per-step deadline covers the device work: action, observation and the app-screen check.
    this.stepDeadline = performance.now() + this.limits.stepTimeoutMs;
    const left = this.stepLeft;
    t0 = performance.now();
    const actedAt = Date.now();
    const elements = this.obs!.elements;
    const done: { fail?: End; ui?: UiStepRecord } = answer.kind === "touch" ? { fail: await this.send(answer.action, left) } : await this.carryOut(answer, elements, left);
    phases.action = since(t0);
    if (done.fail) return this.stop(done.fail);
    const action = answer.kind === "touch" ? answer.action : repeat();
    if (answer.kind === "touch") this.previous = { given: answer.given };
    this.episodeSteps++;

    // No await without a settle policy: each is a promise and a turn of the microtask queue, thousands per second.
    const settled = this.settleSpec.kind === "none" ? undefined : await this.settleAfter(answer.kind === "touch" ? undefined : done.ui, left);

    t0 = performance.now();
    const view = await this.look(left);
    view.actedAt = actedAt;
    phases.observation = since(t0);

    t0 = performance.now();
    const taken = await this.collectLogs();
    phases.log = since(t0);
    if (this.a11yTiming) {
      phases.a11yRead = this.a11yTiming.read;
      phases.a11yDerive = this.a11yTiming.derive;
      this.a11yTiming = undefined;
    }
    phases.total = since(tStep);
    const elapsedMs = performance.now() - this.taskStart;
    if (answer.usage) taken.extras.push(...usageExtras(answer.usage));
    this.versions.note(answer.version);
    this.record(action, taken, view, elapsedMs, phases, done.ui, answer.usage, settled, answer.version, answer.instruction);
    if (view.fail) return this.stop(view.fail);
    this.obs!.extras = extrasByName(taken.extras);
    markMid(this.obs!, taken.reward);
    const facts = { episodeSteps: this.episodeSteps, elapsedMs, appLeft: view.verdict?.left ?? false, episodeEnd: this.port.log.episodeEnd };
    const tr = decideTransition(facts, this.limits);
    if (!tr.last) {
      const agentEnd = this.agentEnd(done.ui) ?? this.budget.end() ?? (this.versions.checked ? await this.staleEnd() : undefined);
      if (agentEnd) return this.stop(agentEnd);
      const goal = this.scoring ? await this.scoring.midEpisode(this.episodeSteps, this.answerText, this.ac.signal) : undefined;
      return goal?.reached ? this.stop({ outcome: "terminated", cause: "goal_reached", detail: goal.detail }) : true;
    }
    const expectedActivity = this.port.task.task.expectedAppScreen?.activity;
    return this.stop(transitionEnd(tr, { episodeSteps: this.episodeSteps, elapsedMs, expectedActivity, verdictMatch: view.verdict?.match }, this.limits));
  }

  /** With `onStale: "end"`, a stale episode ends (truncated, `stale_policy`) after the step that made it so. */
  private async staleEnd(): Promise<End | undefined> {
    const v = await this.versions.check();
    return v && this.versions.ends ? trunc("stale_policy", v.reason) : undefined;
  }

  private stop(end: End): false {
    this.end = end;
    return false;
  }

  private stopRequested(): End | undefined {
    if (this.ac.signal.aborted) return trunc("cancelled", "aborted by the caller");
    const lost = this.port.lostReason();
    if (lost) return trunc("device_lost", `log stream failed: ${lost}`);
    return undefined;
  }

  private async chooseAction(): Promise<Chosen> {
    const ms = this.limits.policyTimeoutMs;
    // Aborted at the deadline, so a late request is cancelled, not left running.
    const act = this.actAc;
    try {
      const a = await withDeadline(this.policy.act(this.obs!, act.signal), ms);
      if (a.timedOut) {
        act.abort(new Error(`the policy deadline of ${ms} ms passed`));
        this.bump("policy_deadline_aborts");
        return trunc("policy_failed", `policy.act did not answer in ${ms} ms (the policy deadline; the request was aborted)`);
      }
      try {
        return { answer: readAnswer(a.value) };
      } catch (e) {
        return trunc("policy_failed", `policy.act returned an invalid action: ${coerceError(e).message}`);
      }
    } catch (e) {
      if (this.ac.signal.aborted) return trunc("cancelled", "aborted by the caller");
      // A human operator who left or idled: the episode's own outcome, not the policy's nor the device's failure.
      if (isPolicyError(e) && e.code === "operator_abandoned") return trunc("operator_abandoned", e.message);
      return trunc("policy_failed", `policy.act: ${coerceError(e).message}`);
    }
  }

  /**
   * A UI action or an invalid answer: carried out on the device (ui-actuator.ts) or recorded with its reason. `status`
   * and `answer` touch nothing; an action the screen cannot take (index out of range, unknown app) is invalid, not fatal.
   */
  private async carryOut(answer: Exclude<ReadAnswer, { kind: "touch" }>, elements: readonly UiElement[] | undefined, left: () => number): Promise<{ fail?: End; ui: UiStepRecord }> {
    const given = answer.given;
    if (answer.kind === "invalid") return { ui: this.invalid(given, answer.reason) };
    const ui = answer.ui;
    const action = JSON.stringify(ui);
    if (ui.action_type === "status") {
      this.agentStatus = ui.goal_status;
      return { ui: this.outcome({ given, action, resolved: { op: "status", goalStatus: ui.goal_status! } }) };
    }
    if (ui.action_type === "answer") {
      this.answerText = ui.text;
      return { ui: this.outcome({ given, action, resolved: { op: "answer", text: ui.text! } }) };
    }
    const ms = this.limits.stepTimeoutMs;
    const r = await withDeadline(this.port.actuate(ui, elements, this.ac.signal), left());
    if (r.timedOut) return { fail: trunc("device_hung", `${ui.action_type} did not complete in ${ms} ms`), ui: this.outcome({ given, action }) };
    const a = r.value;
    if ("invalid" in a) return { ui: this.invalid(given, a.invalid, action) };
    if (a.result.status !== "ok") {
      return { fail: trunc(causeOf(a.result.status, "action_failed"), `${ui.action_type}: ${a.result.status}: ${a.result.message}`), ui: this.outcome({ given, action, resolved: a.resolved }) };
    }
    return { ui: this.outcome({ given, action, resolved: a.resolved }) };
  }

  /** An invalid answer (`action`: the UI action read from it, when the screen could not take it). */
  private invalid(given: string, reason: string, action?: string): UiStepRecord {
    this.invalidActions++;
    return this.outcome({ given, ...(action !== undefined ? { action } : {}), invalid: reason });
  }

  /** The step's UI record; the next observation carries it as `previous`. */
  private outcome(rec: UiStepRecord): UiStepRecord {
    this.previous = { ...rec };
    return rec;
  }

  /** After a step the task did not end: the agent's `status`, or its invalid answers past the limit, end the episode. */
  private agentEnd(ui: UiStepRecord | undefined): End | undefined {
    if (ui?.resolved?.op === "status") return { outcome: "terminated", cause: "agent_status", detail: `the agent answered status ${ui.resolved.goalStatus}` };
    const max = this.limits.maxInvalidActions;
    if (ui?.invalid !== undefined && max > 0 && this.invalidActions >= max) return trunc("invalid_actions", `${this.invalidActions} invalid answers (limit ${max}); last: ${ui.invalid}`);
    return undefined;
  }

  private async send(action: Action, left: () => number): Promise<End | undefined> {
    const ms = this.limits.stepTimeoutMs;
    const sent = await withDeadline(this.port.sendAction(action).catch(adbErrorResult), left());
    if (sent.timedOut) return trunc("device_hung", `action did not complete in ${ms} ms`);
    if (!sent.value) return trunc("device_lost", "no action channel");
    if (sent.value.status !== "ok") return trunc(causeOf(sent.value.status, "action_failed"), `action ${action.actionType}: ${sent.value.status}: ${sent.value.message}`);
    return undefined;
  }

  /** The observation after the action, and the app-screen check due at this step alongside it; its verdict applies to this step. */
  private async look(left: () => number): Promise<StepView> {
    const p = this.port;
    const ms = this.limits.stepTimeoutMs;
    const t0 = performance.now();
    const check = p.appScreenCheck(this.episodeSteps, t0, Math.max(1, left()));
    if (check) this.appScreenChecks++;
    const wantFrame = this.frameEvery > 0 && this.episodeSteps % this.frameEvery === 0;
    const view: StepView = { observedAt: Date.now() };
    const o = await withDeadline(this.observe(this.episodeSteps, wantFrame).catch((e: unknown): Observed => ({ fail: adbErrorResult(e) })), left());
    if (o.timedOut) view.fail = trunc("device_hung", `observation did not complete in ${ms} ms`);
    else if ("fail" in o.value) view.fail = trunc(causeOf(o.value.fail.status, "observation_failed"), `observation: ${o.value.fail.status}: ${o.value.fail.message}`);
    else {
      this.obs = o.value.obs;
      view.a11y = o.value.a11y;
    }
    if (check && !view.fail) {
      const v = await withDeadline(check, left());
      if (v.timedOut) view.fail = trunc("device_hung", `app-screen check did not complete in ${ms} ms`);
      else {
        view.verdict = v.value;
        p.emit({ type: "app-screen:check", serial: p.serial, step: this.episodeSteps, match: v.value.match, left: v.value.left });
      }
    }
    return view;
  }

  /**
   * Waits for the screen to settle as the episode's settle policy says (settle.ts), within the step's time left;
   * nothing to wait for after an answer that touched nothing (`status`, `answer`, an invalid one). Undefined: no policy.
   */
  private async settleAfter(ui: UiStepRecord | undefined, left: () => number): Promise<SettleResult | undefined> {
    if (this.settleSpec.kind === "none") return undefined;
    const touched = !ui || (ui.invalid === undefined && ui.resolved?.op !== "status" && ui.resolved?.op !== "answer");
    if (!touched) return { ms: 0, capped: false };
    const r = await settleScreen(this.settleSpec, this.port.settleSignals(this.events), left(), this.ac.signal);
    this.settleTotals.steps++;
    this.settleTotals.ms += r.ms;
    if (r.capped) this.settleTotals.capped++;
    if (r.noEvents) this.settleTotals.noEvents++;
    return r;
  }

  /** The step's reward and extras. Always gives the event loop a turn, so lines already received are read even when the step did no I/O (REPEAT). */
  private async collectLogs(): Promise<{ reward: number; extras: StepExtra[] }> {
    const c = this.port.config;
    if (c.logSettleMs > 0) await sleep(c.logSettleMs);
    else await new Promise<void>((r) => setImmediate(r));
    return this.port.log.take();
  }

  private record(action: Action, taken: { reward: number; extras: StepExtra[] }, view: StepView, elapsedMs: number, phasesMs: StepPhasesMs, ui?: UiStepRecord, usage?: PolicyUsage, settled?: SettleResult, policyVersion?: string, instruction?: string): void {
    // Optional fields assigned one by one, not spread in: this runs every step, and each spread is an object more.
    const step: StepRecord = {
      index: this.episodeSteps,
      timeOffsetMs: Math.round(elapsedMs),
      action: { actionType: action.actionType, touchPosition: [action.touchPosition[0], action.touchPosition[1]] },
      reward: taken.reward,
      extras: taken.extras,
      policyMs: Math.round(phasesMs.policy * 10) / 10,
    };
    if (view.a11y) step.a11y = view.a11y;
    if (ui) step.ui = this.budget.answer(ui);
    if (view.verdict) step.appScreen = view.verdict.match;
    if (policyVersion !== undefined) step.policyVersion = policyVersion;
    if (settled) {
      step.settleMs = Math.round(settled.ms * 1000) / 1000;
      if (settled.capped) step.settleCapped = true;
    }
    if (instruction !== undefined) step.instruction = instruction;
    this.steps.push(step);
    const p = this.port;
    const event: Extract<EpisodeEvent, { type: "step" }> = { type: "step", serial: p.serial, taskId: p.task.task.id, episodeIndex: this.opts.index, step: this.episodeSteps, reward: taken.reward, phasesMs };
    if (ui) event.uiAction = uiOpOf(ui);
    if (usage) event.policyUsage = usage;
    if (settled) event.settle = { kind: this.settleSpec.kind, ms: settled.ms, capped: settled.capped };
    if (view.actedAt !== undefined) event.actedAt = view.actedAt;
    if (view.observedAt !== undefined) event.observedAt = view.observedAt;
    p.emit(event);
  }

  // ---- finish ----

  /** Ends the episode: cause refined, late lines drained, trajectory built and handed to the sink, then recovery or `needs_recovery`. */
  async finish(): Promise<EpisodeTrajectory> {
    const end = await this.refineCause(this.end ?? trunc("reset_failed", "reset produced no observation"));
    this.end = end;
    this.opts.signal?.removeEventListener("abort", this.onAbort);
    this.events?.close();
    await this.drainLateLines(end);
    await this.finalScore(end);
    // The campaign's version may have moved on while the episode ran: a last staleness check before it is recorded.
    await withDeadline(this.versions.check(), 2000).catch(() => undefined);
    const p = this.port;
    p.log.pause();
    p.recordEnd(end.cause, this.episodeSteps);
    const trajectory = await this.trajectory(end);
    const durationMs = performance.now() - this.tEpisode;
    const { index, seed } = this.opts;
    const { totalReward } = trajectory;
    p.logger.info({ event: "episode:end", index, seed, outcome: end.outcome, cause: end.cause, detail: end.detail, steps: this.episodeSteps, totalReward, durationMs, ...this.settleLog() }, "episode finished");
    p.emit({ type: "episode:end", serial: p.serial, taskId: p.task.task.id, episodeIndex: index, outcome: end.outcome, cause: end.cause, causeDetail: end.detail, steps: this.episodeSteps, totalReward, durationMs });
    if (this.policyStarted) {
      const failed = await tellEpisodeEnd(this.policy, episodeEndInfo(end, this.steps), this.limits.policyTimeoutMs);
      if (failed) p.logger.warn({ event: "policy:end_episode_failed", index, err: failed }, "the policy was not told the episode ended");
    }
    assertCommittable(trajectory);
    if (this.opts.sink) await this.opts.sink(trajectory);
    await p.settle(end.cause, end.detail, this.opts.deferRecovery ?? false);
    return trajectory;
  }

  /** The settle policy's figures for the episode's one log line (nothing without a policy). */
  private settleLog(): Record<string, unknown> {
    if (this.opts.settle === undefined) return {};
    const t = this.settleTotals;
    return { settle: formatSettleSpec(this.settleSpec), settleSteps: t.steps, settleMsMean: t.steps ? Math.round(t.ms / t.steps) : 0, settleCapped: t.capped, ...(t.noEvents ? { settleWithoutEvents: t.noEvents, settleEventsProblem: this.events?.failed } : {}) };
  }

  /** The task instance's final score: its reward goes to the last step (or to a step recorded for it); the instance is closed. */
  private async finalScore(end: End): Promise<void> {
    if (!this.scoring) return;
    try {
      const s = await this.scoring.finish(end.cause, this.answerText, this.ac.signal);
      if (!s || s.error !== undefined || !(s.reward !== 0 && Number.isFinite(s.reward))) return;
      const last = this.steps[this.steps.length - 1];
      if (last) last.reward += s.reward;
      else {
        const a = repeat();
        this.steps.push({ index: 1, timeOffsetMs: Math.round(performance.now() - this.taskStart), action: { actionType: a.actionType, touchPosition: [a.touchPosition[0], a.touchPosition[1]] }, reward: s.reward, extras: [] });
      }
    } finally {
      await this.scoring.close();
    }
  }

  /** A device that no answer came from may be gone rather than hung: ask the adb server (when the driver can). */
  private async refineCause(end: End): Promise<End> {
    if (!DEVICE_TROUBLE.has(end.cause) || end.cause === "device_lost") return end;
    try {
      const r = await withDeadline(this.port.deviceGone(), 2500);
      if (!r.timedOut && r.value) return Object.assign({}, end, { cause: "device_lost" as const, detail: `device ${r.value} (${end.detail})` });
    } catch {
      /* keep the cause */
    }
    return end;
  }

  /** Late reward lines of a truncated, still-running game belong to its last step (farm choice, `finalLogDrainMs`). */
  private async drainLateLines(end: End): Promise<void> {
    const lastStep = this.steps[this.steps.length - 1];
    const ms = this.port.config.finalLogDrainMs;
    if (ms <= 0 || !lastStep || !(end.cause === "step_limit" || end.cause === "time_limit" || end.cause === "cancelled")) return;
    await sleep(ms);
    const late = this.port.log.take();
    lastStep.reward += late.reward;
    lastStep.extras.push(...late.extras);
  }

  private async trajectory(end: End): Promise<EpisodeTrajectory> {
    const p = this.port;
    const counters: Record<string, number> = { ...p.log.counters };
    for (const [k, v] of Object.entries(this.resetCounters)) counters[`reset_${k}`] = v;
    const logcatMalformed = (p.logcatMalformedLines() ?? this.logcatMalformed0) - this.logcatMalformed0;
    if (logcatMalformed > 0) counters.logcat_malformed_lines = logcatMalformed;
    if (this.appScreenChecks > 0) counters.app_screen_checks = this.appScreenChecks;
    for (const [k, v] of Object.entries(this.runCounters)) counters[k] = v;
    if (this.invalidActions > 0) counters.invalid_actions = this.invalidActions;
    if (this.scoring) {
      for (const [k, v] of Object.entries(this.scoring.counters)) counters[k] = v;
      if (this.scoring.final) counters.instance_score_ms = Math.round(this.scoring.finalMs);
    }
    this.budget.counters(counters);
    const initialFrame = await this.frames.attach(this.steps, counters);
    const lastScore = p.log.lastScore;
    return {
      taskId: p.task.task.id,
      taskHash: p.task.hash,
      deviceSerial: p.serial,
      policyName: this.policy.name,
      policyVersion: this.policy.version,
      seed: this.opts.seed,
      startedAt: this.startedAt,
      endedAt: new Date(),
      outcome: end.outcome,
      cause: end.cause,
      causeDetail: end.detail,
      totalReward: this.steps.reduce((a, st) => a + st.reward, 0),
      steps: this.steps,
      counters,
      episodeIndex: this.opts.index,
      dialect: p.task.dialect,
      limits: this.limits,
      ...(this.initialExtras.length ? { initialExtras: this.initialExtras } : {}),
      ...(lastScore !== undefined ? { finalScore: lastScore } : {}),
      ...(this.frameEvery > 0 ? { frameEncoding: this.frames.encoding } : {}),
      resetKind: this.resetKind,
      resetMs: this.resetMs,
      goal: this.goal,
      a11yEvery: this.a11yEvery,
      invalidActions: this.invalidActions,
      ...(initialFrame ? { initialFrame } : {}),
      ...(this.initialA11y ? { initialA11y: this.initialA11y } : {}),
      ...(this.agentStatus ? { agentStatus: this.agentStatus } : {}),
      ...(this.answerText !== undefined ? { answer: this.answerText } : {}),
      ...this.scoring?.fields(),
      ...this.versions.fields(),
      ...(this.opts.settle !== undefined ? { settle: formatSettleSpec(this.settleSpec) } : {}),
    };
  }
}

/** The episode's reset mode: `resetMode`, else the older `resetFromSnapshot`, else `steps`. */
function resetModeOf(opts: RunEpisodeOptions): ResetMode {
  return opts.resetMode ?? (opts.resetFromSnapshot ? "setup-snapshot" : "steps");
}

/** What a step's UI answer came to, for metrics (a closed set: the resolved ops, or `invalid`). */
function uiOpOf(ui: UiStepRecord): string {
  if (ui.invalid !== undefined) return "invalid";
  return ui.resolved?.op ?? "unknown";
}
