/**
 * The coordinator of one device bound to one task (android_env's Coordinator): bind = open the logcat stream
 * (cleared) and the action channel, read the screen size, run setup_steps; health; recovery = close, wait for
 * the device, bind again, at most `maxRecoveries` attempts between two good episodes, after which the device
 * is reported unusable. Device trouble is state and events here, never an exception.
 *
 *   const s = await DeviceSession.open({ device, task, config: { settleMs: 100 } });
 *   if (s.state === "ready") for (let i = 0; i < 10; i++) await s.runEpisode({ seed: i, index: i, policy });
 *   await s.close();
 */
import type { ActionChannel, Device, LogcatStream, StepResult } from "@farm/adb";
import type { Logger } from "@farm/log";
import { silentLogger } from "@farm/log";
import type { LoadedTask } from "@farm/task";
import { Finger } from "./action.ts";
import { AppScreenMonitor } from "./app-screen-monitor.ts";
import { compileEpisodeConfig, type CompiledEpisodeConfig, type EpisodeConfig } from "./config.ts";
import { withDeadline } from "./deadline.ts";
import { DeviceUnusableError, EpisodeError, adbErrorResult, coerceError } from "./errors.ts";
import { safeEmit, type EpisodeEvent, type EventHook } from "./events.ts";
import { LogAccumulator } from "./log-accumulator.ts";
import { seededRandomXor } from "@farm/seeded-random";
import { sleep } from "@farm/time";
import { assertRunnable, runSteps, type StepRunContext, type StepsOutcome } from "./step-interpreter.ts";
import { runEpisode } from "./runner.ts";
import { DEVICE_TROUBLE, endCounterKey } from "./episode-end.ts";
import { EpisodeRun, type RunEpisodeOptions } from "./episode-run.ts";
import type { SessionPort } from "./session-port.ts";
import { EpisodeFrames } from "./episode-frames.ts";
import { actuateUi } from "./ui-actuator.ts";
import { readTree } from "./ui-elements.ts";
import { deviceSettleSignals, EventClock } from "./settle-sources.ts";
import { snapshotBeforeReset, type ResetKind, type SnapshotSession } from "./snapshot-reset.ts";
import { startSnapshotName, startSnapshotReset, type StartSnapshotSession } from "./start-snapshot.ts";
import { resetStepsWithGameConfig } from "./game-config.ts";
import type { ResetMode } from "@farm/task";
import type { EndCause } from "./trajectory-types.ts";
import type { EpisodeTrajectory } from "./trajectory-types.ts";

/** `needs_recovery`: an episode with device trouble ran with `deferRecovery`; `recover()` (or the next episode) runs it. */
export type SessionState = "binding" | "ready" | "needs_recovery" | "recovering" | "unusable" | "closed";

export interface DeviceSessionOptions {
  device: Device;
  task: LoadedTask;
  config?: EpisodeConfig;
  /** Structured log lines (default: silent). */
  logger?: Logger;
  /** Typed events for the worker and metrics. */
  onEvent?: EventHook;
  /** Seed for random choices made by setup steps. @default 0 */
  setupSeed?: number;
}

export class DeviceSession {
  readonly device: Device;
  readonly task: LoadedTask;
  readonly config: CompiledEpisodeConfig;
  readonly logger: Logger;
  private readonly acc: LogAccumulator;
  private readonly finger = new Finger();
  private readonly monitor: AppScreenMonitor;
  private readonly randomActivity: { packageName?: string } = {};
  private channel: ActionChannel | undefined;
  private logcat: LogcatStream | undefined;
  /** Set when the log stream failed for good (device gone). */
  private lost: string | undefined;
  /** A relaunch is due before the next episode (e.g. too many bad episodes). */
  private relaunchDue: string | undefined;
  /** Consecutive app-left episodes. */
  private badEpisodes = 0;
  /** Episodes run since the last bind (setup); a snapshot of the setup state is taken only at 0. */
  private episodesSinceBind = 0;
  /** The snapshot of this session's setup state, once saved (snapshot-reset.ts). */
  private snapshotSaved: string | undefined;
  /** This session's start snapshot (setup + reset steps), once saved; "" after its save failed (start-snapshot.ts). */
  private startSnapshot: string | undefined;
  private screen = { width: 0, height: 0 };
  private orientation: 0 | 1 | 2 | 3 = 0;
  /** What an episode run sees of this session (session-port.ts). */
  private readonly port: SessionPort;
  /** Cause-named counters over the session's life (android_env's stats()). */
  readonly stats: Record<string, number> = {};
  private _state: SessionState = "binding";
  private _unusableReason = "";
  private _pendingRecovery: string | undefined;
  /** The recovery under way, shared by concurrent `recover()` calls (two would bind the device twice). */
  private recovery: Promise<boolean> | undefined;
  private recoveriesUsed = 0;
  private generation = 0;
  private readonly onEvent: EventHook | undefined;
  private readonly setupSeed: number;

  private constructor(opts: DeviceSessionOptions) {
    this.device = opts.device;
    this.task = opts.task;
    this.config = compileEpisodeConfig(opts.config);
    this.logger = (opts.logger ?? silentLogger).child({ component: "episode", serial: opts.device.serial, taskId: opts.task.task.id });
    this.onEvent = opts.onEvent;
    this.setupSeed = opts.setupSeed ?? 0;
    const t = opts.task.task;
    this.acc = new LogAccumulator(t.logParsing, t.extrasSpec, this.config.extrasMaxPerName, {
      onMalformed: (what, detail) => {
        this.logger.warn({ event: "log:malformed", what, detail }, "malformed log line ignored");
        this.emit({ type: "log:malformed", serial: this.device.serial, taskId: t.id, what, detail });
      },
      onExtraDropped: (name, reason, detail) => {
        this.logger.warn({ event: "extra:dropped", name, reason, detail }, "extra dropped by extras_spec");
        this.emit({ type: "extra:dropped", serial: this.device.serial, taskId: t.id, name, reason, detail });
      },
    });
    this.monitor = new AppScreenMonitor(
      t.expectedAppScreen,
      { everySteps: this.config.appScreenCheckEverySteps, everyMs: this.config.appScreenCheckEveryMs },
      this.config.maxFailedCurrentActivity,
    );
    this.port = this.makePort();
  }

  /**
   * Binds the device to the task. Throws only for what is not device trouble (TaskNotRunnableError, a bad
   * config); a device that cannot be bound within the recovery budget gives a session in state `unusable`.
   */
  static async open(opts: DeviceSessionOptions): Promise<DeviceSession> {
    const s = new DeviceSession(opts);
    assertRunnable(opts.task.task, s.config.apkDirs);
    const first = await s.bind();
    if (!first.ok) {
      s.count("relaunch_count_setup_failed");
      await s.recover(`bind failed: ${first.detail}`);
    } else s._state = "ready";
    return s;
  }

  get state(): SessionState {
    return this._state;
  }

  /** The device's screen in pixels, as read at bind (0×0 before). */
  get screenSize(): { width: number; height: number } {
    return { ...this.screen };
  }

  get unusableReason(): string {
    return this._unusableReason;
  }

  /** Why the session needs recovery (state `needs_recovery`), else undefined. */
  get pendingRecovery(): string | undefined {
    return this._state === "needs_recovery" ? this._pendingRecovery : undefined;
  }

  /**
   * Runs one episode (see runner.ts). Device trouble ends it as a truncation and sends the device through
   * recovery, or with `deferRecovery` leaves the session `needs_recovery` for the caller's `recover()`.
   */
  runEpisode(opts: RunEpisodeOptions): Promise<EpisodeTrajectory> {
    return runEpisode(this.port, opts);
  }

  /**
   * The same episode, driven by the caller: `await run.reset()`, then `while (await run.step())`, then
   * `await run.finish()` (which hands the trajectory to the sink and settles recovery like `runEpisode`).
   */
  startEpisode(opts: RunEpisodeOptions): Promise<EpisodeRun> {
    return EpisodeRun.start(this.port, opts);
  }

  /** The narrow view an `EpisodeRun` gets: closures over this session's private state. */
  private makePort(): SessionPort {
    const c = this.config;
    return {
      serial: this.device.serial,
      task: this.task,
      config: c,
      logger: this.logger,
      log: this.acc,
      ensureReady: () => this.ensureReady(),
      emit: (e) => this.emit(e),
      count: (k, by) => this.count(k, by),
      screen: () => this.screen,
      orientation: () => this.orientation,
      readOrientation: () => this.readOrientation(),
      screenshot: () => this.device.screenshot({ timeoutMs: c.adbCallTimeoutMs }),
      frames: (spec) => new EpisodeFrames(this.device, spec ?? c.frameEncoding, c.adbCallTimeoutMs),
      resetDone: () => void this.episodesSinceBind++,
      deviceGone: () => this.deviceGone(),
      liftFinger: () => this.liftFinger(),
      sendAction: async (a) => (this.channel ? this.finger.apply(this.channel, a, this.screen) : undefined),
      screenTree: () => readTree(this.device, c.adbCallTimeoutMs),
      settleSignals: (events) => deviceSettleSignals(this.device, c.adbCallTimeoutMs, events),
      openA11yEvents: () => EventClock.open(this.device, c.adbCallTimeoutMs),
      deviceCalls: () => ({
        execute: (request, o) => this.device.execute(request, { timeoutMs: o?.timeoutMs ?? c.adbCallTimeoutMs, apkDirs: c.apkDirs }),
        shell: (commandLine, o) => this.device.shell(commandLine, { timeoutMs: o?.timeoutMs ?? c.adbCallTimeoutMs }),
        screenTree: () => readTree(this.device, c.adbCallTimeoutMs),
      }),
      actuate: (ui, elements, signal) => actuateUi(ui, elements, { device: this.device, channel: this.channel, screen: () => this.screen, orientation: () => this.orientation, adbCallTimeoutMs: c.adbCallTimeoutMs }, signal),
      runResetSteps: (seed, counters, signal, mode, gameConfig) => this.runResetSteps(seed, counters, signal, mode, gameConfig),
      lostReason: () => this.lost,
      logcatMalformedLines: () => this.logcat?.malformedLines,
      startAppScreenChecks: (now) => this.monitor.resetEpisode(now),
      appScreenCheck: (steps, now, budgetMs) => (this.monitor.due(steps, now) ? this.monitor.check(this.device, now, budgetMs) : undefined),
      recordEnd: (cause, steps) => this.recordEnd(cause, steps),
      settle: (cause, detail, defer) => this.settle(cause, detail, defer),
    };
  }

  private async ensureReady(): Promise<void> {
    if (this._state === "closed") throw new EpisodeError("session_closed", `session for ${this.device.serial} is closed`, true);
    if (this._state === "unusable") throw new DeviceUnusableError(this.device.serial, this._unusableReason);
    const due = this.pendingRecovery ?? this.relaunchDue;
    if (due && !(await this.recover(due))) throw new DeviceUnusableError(this.device.serial, this._unusableReason);
    if (this._state !== "ready") throw new EpisodeError("session_closed", `session for ${this.device.serial} is ${this._state}`, true);
  }

  private async deviceGone(): Promise<string | undefined> {
    if (!this.device.state) return undefined;
    const r = await this.device.state({ timeoutMs: 2000 });
    return r === "gone" || r === "offline" ? r : undefined;
  }

  private async liftFinger(): Promise<void> {
    if (!this.channel) return;
    const lifted = await this.finger.lift(this.channel);
    if (lifted.status !== "ok") this.relaunchDue = `lifting the finger failed: ${lifted.message}`;
  }

  private async runResetSteps(seed: number, counters: Record<string, number>, signal: AbortSignal, mode: ResetMode, gameConfig?: Record<string, unknown>): Promise<{ steps: StepsOutcome; kind: ResetKind } | { fail: string }> {
    this.acc.pause();
    try {
      if (mode === "start-snapshot") {
        const r = await startSnapshotReset(this.startSnapshotSession(seed, counters, signal), counters);
        // Lines that reached us before or during the load (the previous episode's last ones) are dropped while still
        // paused: the episode's log position starts after the load.
        if ("kind" in r && r.kind === "start_snapshot") await new Promise<void>((res) => setImmediate(res));
        return r;
      }
      let kind: ResetKind = "steps";
      if (mode === "setup-snapshot") {
        const how = await snapshotBeforeReset(this.snapshotSession(), counters);
        if ("fail" in how) return how;
        kind = how.kind;
      }
      const steps = gameConfig ? resetStepsWithGameConfig(this.task.task.resetSteps, gameConfig) : this.task.task.resetSteps;
      return { steps: await runSteps(steps, this.stepContext(seed, counters, signal)), kind };
    } finally {
      this.acc.resumeFresh();
    }
  }

  /** The view snapshot-reset.ts gets of this session. */
  private snapshotSession(): SnapshotSession {
    const self = this;
    return {
      device: this.device,
      task: this.task,
      config: this.config,
      logger: this.logger,
      get snapshotSaved() {
        return self.snapshotSaved;
      },
      set snapshotSaved(v: string | undefined) {
        self.snapshotSaved = v;
      },
      get episodesSinceBind() {
        return self.episodesSinceBind;
      },
      setupAgain: (reason) => this.setupAgain(reason),
      onFallback: (reason) => this.emit({ type: "snapshot:fallback", serial: this.device.serial, taskId: this.task.task.id, reason }),
    };
  }

  /** The view start-snapshot.ts gets of this session. */
  private startSnapshotSession(seed: number, counters: Record<string, number>, signal: AbortSignal): StartSnapshotSession {
    const self = this;
    return {
      device: this.device,
      config: this.config,
      logger: this.logger,
      get startSnapshot() {
        return self.startSnapshot;
      },
      set startSnapshot(v: string | undefined) {
        self.startSnapshot = v;
      },
      get episodesSinceBind() {
        return self.episodesSinceBind;
      },
      // What setup's outcome depends on besides the task: where its APKs come from and its seed.
      snapshotName: () => startSnapshotName(this.task.hash, { apkDirs: this.config.apkDirs, setupSeed: this.setupSeed }, this.screen),
      runResetSteps: () => runSteps(this.task.task.resetSteps, this.stepContext(seed, counters, signal)),
      setupAgain: (reason) => this.setupAgain(reason),
      onFallback: (reason) => this.emit({ type: "snapshot:fallback", serial: this.device.serial, taskId: this.task.task.id, reason }),
    };
  }

  /** Binds again (setup steps included) for a reset that could not use its snapshot; false if that failed. */
  private async setupAgain(reason: string): Promise<boolean> {
    this.logger.info({ event: "device:setup-again", reason }, "setting up again");
    return (await this.bind()).ok;
  }

  /** Bookkeeping of an ended episode (android_env's cause-named counters; bad episodes, §7.8). */
  private recordEnd(cause: EndCause, steps: number): void {
    this.count(endCounterKey(cause));
    this.count("episodes");
    this.count("steps", steps);
    if (cause === "app_left") {
      this.badEpisodes++;
      if (this.badEpisodes >= this.config.maxBadEpisodes) {
        this.count("restart_count_max_bad_states");
        this.relaunchDue = `${this.badEpisodes} bad episodes in a row`;
        this.badEpisodes = 0;
      }
    } else if (!DEVICE_TROUBLE.has(cause)) this.badEpisodes = 0;
  }

  /** Device trouble → recovery now, or `needs_recovery` for the caller; a good episode refills the recovery budget. */
  private async settle(cause: EndCause, detail: string, deferRecovery: boolean): Promise<void> {
    if (DEVICE_TROUBLE.has(cause)) {
      this.count(`relaunch_count_${cause}`);
      const reason = `${cause}: ${detail}`;
      if (deferRecovery) this.needRecovery(reason);
      else await this.recover(reason);
    } else if (cause !== "cancelled" && cause !== "policy_failed") this.recoveriesUsed = 0;
  }

  private emit(e: EpisodeEvent): void {
    safeEmit(this.onEvent, e);
  }

  private count(key: string, by = 1): void {
    this.stats[key] = (this.stats[key] ?? 0) + by;
  }

  /** Device trouble with deferred recovery: the caller recovers when it wants. */
  private needRecovery(reason: string): void {
    if (this._state !== "ready") return;
    this._state = "needs_recovery";
    this._pendingRecovery = reason;
  }

  /** The step-interpreter context for this session. */
  private stepContext(seed: number, counters: Record<string, number>, signal?: AbortSignal): StepRunContext {
    return {
      device: this.device,
      settleMs: this.config.settleMs,
      apkDirs: this.config.apkDirs,
      rng: seededRandomXor(seed).next,
      listenForMessage: (m) => this.acc.listenForMessage(m),
      counters,
      randomActivity: this.randomActivity,
      ...(signal ? { signal } : {}),
    };
  }

  /** Reads the orientation; a failure is returned as the StepResult. */
  private async readOrientation(): Promise<StepResult | undefined> {
    const r = await withDeadline(this.device.orientation({ timeoutMs: this.config.adbCallTimeoutMs }), this.config.adbCallTimeoutMs);
    if (r.timedOut) return { status: "timeout", message: "orientation: no answer", output: "", durationMs: this.config.adbCallTimeoutMs };
    if (typeof r.value === "number") {
      this.orientation = r.value;
      return undefined;
    }
    return r.value;
  }

  private async closeChannels(): Promise<void> {
    this.generation++;
    const ch = this.channel;
    const lc = this.logcat;
    this.channel = undefined;
    this.logcat = undefined;
    this.finger.forget();
    await Promise.all([ch && withDeadline(ch.close().catch(() => {}), 2000), lc && withDeadline(lc.close().catch(() => {}), 2000)]);
  }

  /** Opens logcat and the action channel, reads the screen, runs setup_steps. */
  private async bind(): Promise<{ ok: true } | { ok: false; detail: string; status: string }> {
    const t0 = performance.now();
    const c = this.config;
    const result = await (async (): Promise<{ ok: true } | { ok: false; detail: string; status: string }> => {
      try {
        await this.closeChannels();
        this.lost = undefined;
        const gen = this.generation;
        const lc = await withDeadline(this.device.openLogcat({ filters: this.task.task.logParsing.filters, clear: true }), c.adbCallTimeoutMs);
        if (lc.timedOut) return { ok: false, status: "timeout", detail: "opening logcat: no answer" };
        this.logcat = lc.value;
        if (lc.value.state === "failed" || lc.value.state === "closed") return { ok: false, status: "adb_error", detail: "logcat stream could not be opened" };
        lc.value.onRecord((rec) => {
          if (gen === this.generation) this.acc.onRecord(rec);
        });
        lc.value.onFailed((reason) => {
          if (gen === this.generation) this.lost = reason || "logcat stream failed";
        });
        const ch = await withDeadline(this.device.openActionChannel(), c.adbCallTimeoutMs);
        if (ch.timedOut) return { ok: false, status: "timeout", detail: "opening the action channel: no answer" };
        this.channel = ch.value;
        const size = await withDeadline(this.device.screenSize({ timeoutMs: c.adbCallTimeoutMs }), c.adbCallTimeoutMs);
        if (size.timedOut) return { ok: false, status: "timeout", detail: "screen size: no answer" };
        if (!("width" in size.value)) return { ok: false, status: size.value.status, detail: `screen size: ${size.value.message}` };
        this.screen = { width: size.value.width, height: size.value.height };
        this.acc.pause();
        const ac = new AbortController();
        const counters: Record<string, number> = {};
        const steps = await withDeadline(runSteps(this.task.task.setupSteps, this.stepContext(this.setupSeed, counters, ac.signal)), c.resetTimeoutMs);
        for (const [k, v] of Object.entries(counters)) this.count(k, v);
        if (steps.timedOut) {
          ac.abort();
          return { ok: false, status: "timeout", detail: `setup steps did not finish in ${c.resetTimeoutMs} ms` };
        }
        if (!steps.value.ok) return { ok: false, status: steps.value.status, detail: `setup step ${steps.value.stepIndex + 1} (line ${steps.value.line}): ${steps.value.message}` };
        const o = await this.readOrientation();
        if (o) return { ok: false, status: o.status, detail: `orientation: ${o.message}` };
        this.episodesSinceBind = 0;
        return { ok: true };
      } catch (e) {
        return { ok: false, status: "adb_error", detail: coerceError(e).message };
      }
    })();
    const durationMs = performance.now() - t0;
    this.emit({ type: "device:bind", serial: this.device.serial, ok: result.ok, durationMs, detail: result.ok ? "" : result.detail });
    this.logger.info({ event: "device:bind", ok: result.ok, durationMs, detail: result.ok ? undefined : result.detail }, result.ok ? "device bound" : "device bind failed");
    return result;
  }

  /**
   * Recovery: close everything, wait for the device to answer, bind again (setup steps included), with a
   * backoff between attempts. Attempts count against `maxRecoveries` until the next good episode; when the
   * budget is spent the device is reported unusable. Returns whether the device is ready. `reason` defaults to
   * the pending one (state `needs_recovery`); a call while a recovery runs joins it.
   */
  recover(reason?: string): Promise<boolean> {
    if (this._state === "closed" || this._state === "unusable") return Promise.resolve(false);
    this.recovery ??= this.runRecovery(reason ?? this._pendingRecovery ?? "recovery requested").finally(() => {
      this.recovery = undefined;
    });
    return this.recovery;
  }

  private async runRecovery(reason: string): Promise<boolean> {
    this._state = "recovering";
    this._pendingRecovery = undefined;
    const c = this.config;
    let lastDetail = reason;
    while (this.recoveriesUsed < c.maxRecoveries) {
      this.recoveriesUsed++;
      const attempt = this.recoveriesUsed;
      const t0 = performance.now();
      this.count("recovery_attempts");
      const boot = await withDeadline(this.device.waitBootComplete(c.recoveryWaitMs).catch(adbErrorResult), c.recoveryWaitMs + 1000);
      let ok = false;
      if (boot.timedOut || boot.value.status !== "ok") {
        lastDetail = boot.timedOut ? "device did not answer" : `device not ready: ${boot.value.status}: ${boot.value.message}`;
      } else {
        const b = await this.bind();
        ok = b.ok;
        lastDetail = b.ok ? "" : b.detail;
      }
      const durationMs = performance.now() - t0;
      this.emit({ type: "device:recovery", serial: this.device.serial, attempt, ok, detail: ok ? reason : lastDetail, durationMs });
      this.logger.warn({ event: "device:recovery", attempt, ok, reason, detail: lastDetail, durationMs }, ok ? "device recovered" : "recovery attempt failed");
      if (ok) {
        this.count("recoveries_ok");
        this._state = "ready";
        this.relaunchDue = undefined;
        return true;
      }
      if (this.recoveriesUsed < c.maxRecoveries) await sleep(c.recoveryBackoffMs);
    }
    this._state = "unusable";
    this._unusableReason = `${reason}; recovery budget of ${c.maxRecoveries} spent (last: ${lastDetail})`;
    this.count("devices_unusable");
    await this.closeChannels();
    this.emit({ type: "device:unusable", serial: this.device.serial, reason: this._unusableReason });
    this.logger.error({ event: "device:unusable", reason: this._unusableReason }, "device reported unusable");
    return false;
  }

  /** Idempotent. */
  async close(): Promise<void> {
    if (this._state === "closed") return;
    this._state = "closed";
    if (this.channel) await withDeadline(this.finger.lift(this.channel).catch(() => undefined), 2000);
    await this.closeChannels();
  }
}
