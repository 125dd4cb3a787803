/**
 * One episode on a bound device (task-format.md §7.6, §7.7): reset, then the action loop. The policy chooses
 * from the observation, the action goes out on the action channel, rewards / extras / episode_end come from
 * logcat, the limits decide the boundary. Device trouble (a failing reset step, a failed action or
 * observation, a step past its deadline, a lost device) ends the episode as a truncation with its cause and
 * sends the device through recovery (or, with `deferRecovery`, leaves the session `needs_recovery` for the
 * caller's `session.recover()`); it is never thrown.
 */
import type { StepResult, StepStatus } from "@farm/adb";
import type { FrameSpec } from "@farm/frames";
import type { Action, Observation, Policy } from "@farm/policy";
import type { AppScreenVerdict } from "./app-screen-monitor.ts";
import { since, withDeadline } from "./deadline.ts";
import type { DeviceSession } from "./device-session.ts";
import { EpisodeFrames } from "./episode-frames.ts";
import { snapshotBeforeReset, type ResetKind } from "./snapshot-reset.ts";
import { DeviceUnusableError, EpisodeError, adbErrorResult, coerceError } from "./errors.ts";
import type { StepPhasesMs } from "./events.ts";
import { extrasByName } from "./extras.ts";
import { assertCommittable } from "./result-check.ts";
import { effectiveLimits, type EpisodeLimitOverrides } from "./episode-limits.ts";
import { decideTransition, timeLimitSec } from "./limits.ts";
import { runSteps, sleep } from "./step-interpreter.ts";
import type { EndCause, EpisodeOutcome, EpisodeTrajectory, StepExtra, StepRecord } from "./trajectory-types.ts";

export interface RunEpisodeOptions {
  /** Seeds the policy (via reset) and the task's random choices. */
  seed: number;
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
  /** Reset from a snapshot of the setup state, then the reset steps (snapshot-reset.ts). @default false */
  resetFromSnapshot?: boolean;
  /** This episode's step/time limits and step deadline, over the task's and the session config's (this episode only). */
  limits?: EpisodeLimitOverrides;
  /**
   * Device trouble: return at once and leave the session in state `needs_recovery` instead of recovering
   * before returning; the caller runs `session.recover()` when it suits it (e.g. after handing its job back).
   * A `runEpisode` on a session that needs recovery recovers first. @default false
   */
  deferRecovery?: boolean;
}

/** Causes that mean the device is in trouble and must go through recovery. */
export const DEVICE_TROUBLE: ReadonlySet<EndCause> = new Set<EndCause>(["reset_failed", "action_failed", "observation_failed", "device_hung", "device_lost"]);

type End = { outcome: EpisodeOutcome; cause: EndCause; detail: string };

const trunc = (cause: EndCause, detail: string): End => ({ outcome: "truncated", cause, detail });

/** Maps a failed device call to a cause: no answer → hung, transport gone → lost, anything else → `other`. */
function causeOf(status: StepStatus | "check_failed" | "cancelled", other: EndCause): EndCause {
  if (status === "timeout") return "device_hung";
  if (status === "adb_error") return "device_lost";
  if (status === "cancelled") return "cancelled";
  return other;
}

/** Why an action breaks the contract (ActionType and a finite [x, y]), or undefined when it is fine. */
function invalidAction(a: Action | undefined): string | undefined {
  if (!a || typeof a !== "object") return "not an object";
  if (a.actionType !== "TOUCH" && a.actionType !== "LIFT" && a.actionType !== "REPEAT") return `actionType ${JSON.stringify(a.actionType)}`;
  const p = a.touchPosition;
  if (!Array.isArray(p) || p.length !== 2 || !p.every((v) => typeof v === "number" && Number.isFinite(v))) return `touchPosition ${JSON.stringify(p)}`;
  return undefined;
}

/** A device that no answer came from may be gone rather than hung: ask the adb server (when the driver can). */
async function refineCause(s: DeviceSession, end: End): Promise<End> {
  if (!DEVICE_TROUBLE.has(end.cause) || end.cause === "device_lost" || !s.device.state) return end;
  try {
    const r = await withDeadline(s.device.state({ timeoutMs: 2000 }), 2500);
    if (!r.timedOut && (r.value === "gone" || r.value === "offline")) return { ...end, cause: "device_lost", detail: `device ${r.value} (${end.detail})` };
  } catch {
    /* keep the cause */
  }
  return end;
}

export async function runEpisode(s: DeviceSession, opts: RunEpisodeOptions): Promise<EpisodeTrajectory> {
  // Checked before anything runs: a bad override is the caller's error, not an episode.
  const limits = effectiveLimits(s.task.task, s.config, opts.limits);
  if (s.state === "closed") throw new EpisodeError("session_closed", `session for ${s.device.serial} is closed`, true);
  if (s.state === "unusable") throw new DeviceUnusableError(s.device.serial, s.unusableReason);
  const due = s.pendingRecovery ?? s.relaunchDue;
  if (due && !(await s.recover(due))) throw new DeviceUnusableError(s.device.serial, s.unusableReason);
  if (s.state !== "ready") throw new EpisodeError("session_closed", `session for ${s.device.serial} is ${s.state}`, true);

  const c = s.config;
  const task = s.task.task;
  const serial = s.device.serial;
  const policy = opts.policy;
  const frameEvery = opts.frameEvery ?? c.frameEvery;
  const frames = new EpisodeFrames(s.device, opts.frameEncoding ?? c.frameEncoding, c.adbCallTimeoutMs);
  const stepTimeoutMs = limits.stepTimeoutMs;
  const startedAt = new Date();
  const tEpisode = performance.now();
  const steps: StepRecord[] = [];
  const resetCounters: Record<string, number> = {};
  let initialExtras: StepExtra[] = [];
  const logcatMalformed0 = s.logcat?.malformedLines ?? 0;
  const ac = new AbortController();
  const onAbort = () => ac.abort();
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  let end: End | undefined;
  let taskStart = performance.now();
  let lastObsAt = taskStart;
  let obs: Observation | undefined;
  let appScreenChecks = 0;
  s.logger.debug({ event: "episode:reset", index: opts.index, seed: opts.seed }, "reset");

  /** Observation after an action (or the reset): the screen is taken only when the policy or the trajectory wants it. */
  const observe = async (stepIndex: number, wantFrame: boolean): Promise<{ obs: Observation } | { fail: StepResult }> => {
    const shot = await frames.take(stepIndex, policy.needsPixels, wantFrame);
    if ("fail" in shot) return shot;
    const pixels = shot.pixels;
    const now = performance.now();
    const o: Observation = {
      timedeltaUs: stepIndex === 0 ? 0 : Math.round((now - lastObsAt) * 1000),
      orientation: s.orientation,
      extras: {},
      stepIndex,
      screen: { ...s.screen },
      ...(pixels ? { pixels } : {}),
    };
    lastObsAt = now;
    return { obs: o };
  };

  // ---- reset (§7.6) ----
  const tReset = performance.now();
  let resetKind: ResetKind = "steps";
  const reset = async (): Promise<End | undefined> => {
    if (s.channel) {
      const lifted = await s.finger.lift(s.channel);
      if (lifted.status !== "ok") s.relaunchDue = `lifting the finger failed: ${lifted.message}`;
    }
    s.acc.pause();
    if (opts.resetFromSnapshot) {
      const how = await snapshotBeforeReset(s, resetCounters);
      if ("fail" in how) {
        s.acc.resumeFresh();
        return trunc("reset_failed", how.fail);
      }
      resetKind = how.kind;
    }
    let stepsOk;
    try {
      stepsOk = await runSteps(task.resetSteps, s.stepContext(opts.seed, resetCounters, ac.signal));
    } finally {
      s.acc.resumeFresh();
    }
    if (!stepsOk.ok) {
      return trunc(stepsOk.status === "cancelled" ? "cancelled" : "reset_failed", `reset step ${stepsOk.stepIndex + 1} (line ${stepsOk.line}): ${stepsOk.message}`);
    }
    taskStart = performance.now();
    lastObsAt = taskStart;
    s.monitor.resetEpisode(taskStart);
    const o = await s.readOrientation();
    if (o) return trunc(causeOf(o.status, "observation_failed"), `orientation at reset: ${o.status}: ${o.message}`);
    const first = await observe(0, false);
    if ("fail" in first) return trunc(causeOf(first.fail.status, "observation_failed"), `first observation: ${first.fail.status}: ${first.fail.message}`);
    obs = first.obs;
    try {
      const r = await withDeadline(policy.reset({ seed: opts.seed, episodeIndex: opts.index, screen: { ...s.screen } }), c.policyTimeoutMs);
      if (r.timedOut) return trunc("policy_failed", `policy.reset did not finish in ${c.policyTimeoutMs} ms`);
    } catch (e) {
      return trunc("policy_failed", `policy.reset: ${coerceError(e).message}`);
    }
    // Extras logged since the reset travel with FIRST; FIRST's reward is 0 and what was logged so far counts for step 1.
    initialExtras = s.acc.takeExtras();
    obs.extras = extrasByName(initialExtras);
    return undefined;
  };
  try {
    const r = await withDeadline(reset(), c.resetTimeoutMs);
    if (r.timedOut) {
      ac.abort();
      end = trunc("device_hung", `reset did not finish in ${c.resetTimeoutMs} ms`);
    } else end = r.value;
  } catch (e) {
    end = trunc("reset_failed", `reset: ${coerceError(e).message}`);
  }
  const resetMs = performance.now() - tReset;
  s.episodesSinceBind++;
  for (const [k, v] of Object.entries(resetCounters)) s.count(k, v);
  s.emit({ type: "episode:start", serial, taskId: task.id, episodeIndex: opts.index, seed: opts.seed, resetMs });

  // ---- action loop (§7.7) ----
  let episodeSteps = 0;
  while (!end && obs) {
    if (ac.signal.aborted) {
      end = trunc("cancelled", "aborted by the caller");
      break;
    }
    if (s.lost) {
      end = trunc("device_lost", `log stream failed: ${s.lost}`);
      break;
    }
    const phases: StepPhasesMs = { policy: 0, action: 0, observation: 0, log: 0 };
    let t0 = performance.now();
    let action: Action;
    try {
      const a = await withDeadline(policy.act(obs, ac.signal), c.policyTimeoutMs);
      if (a.timedOut) {
        end = trunc("policy_failed", `policy.act did not answer in ${c.policyTimeoutMs} ms`);
        break;
      }
      action = a.value;
      const bad = invalidAction(action);
      if (bad) {
        end = trunc("policy_failed", `policy.act returned an invalid action: ${bad}`);
        break;
      }
    } catch (e) {
      end = ac.signal.aborted ? trunc("cancelled", "aborted by the caller") : trunc("policy_failed", `policy.act: ${coerceError(e).message}`);
      break;
    }
    phases.policy = since(t0);

    // The per-step deadline covers the device work: action, observation and the app-screen check.
    const stepDeadline = performance.now() + stepTimeoutMs;
    const left = () => Math.max(0, stepDeadline - performance.now());
    t0 = performance.now();
    if (!s.channel) {
      end = trunc("device_lost", "no action channel");
      break;
    }
    const sent = await withDeadline(s.finger.apply(s.channel, action, s.screen).catch(adbErrorResult), left());
    phases.action = since(t0);
    if (sent.timedOut) {
      end = trunc("device_hung", `action did not complete in ${stepTimeoutMs} ms`);
      break;
    }
    if (sent.value.status !== "ok") {
      end = trunc(causeOf(sent.value.status, "action_failed"), `action ${action.actionType}: ${sent.value.status}: ${sent.value.message}`);
      break;
    }
    episodeSteps++;

    // App-screen check for this step, alongside the observation; its verdict applies to this step.
    t0 = performance.now();
    let check: Promise<AppScreenVerdict> | undefined;
    if (s.monitor.due(episodeSteps, t0)) {
      appScreenChecks++;
      check = s.monitor.check(s.device, t0, Math.max(1, left()));
    }
    const wantFrame = frameEvery > 0 && episodeSteps % frameEvery === 0;
    let obsFail: End | undefined;
    const o = await withDeadline(observe(episodeSteps, wantFrame).catch((e: unknown) => ({ fail: adbErrorResult(e) })), left());
    if (o.timedOut) obsFail = trunc("device_hung", `observation did not complete in ${stepTimeoutMs} ms`);
    else if ("fail" in o.value) obsFail = trunc(causeOf(o.value.fail.status, "observation_failed"), `observation: ${o.value.fail.status}: ${o.value.fail.message}`);
    else obs = o.value.obs;
    let verdict: AppScreenVerdict | undefined;
    if (check && !obsFail) {
      const v = await withDeadline(check, left());
      if (v.timedOut) obsFail = trunc("device_hung", `app-screen check did not complete in ${stepTimeoutMs} ms`);
      else {
        verdict = v.value;
        s.emit({ type: "app-screen:check", serial, step: episodeSteps, match: verdict.match, left: verdict.left });
      }
    }
    phases.observation = since(t0);

    t0 = performance.now();
    // Always give the event loop a turn, so log lines already received are read even when the step did no I/O (REPEAT).
    if (c.logSettleMs > 0) await sleep(c.logSettleMs);
    else await new Promise<void>((r) => setImmediate(r));
    const taken = s.acc.take();
    phases.log = since(t0);
    const elapsedMs = performance.now() - taskStart;
    const rec: StepRecord = {
      index: episodeSteps,
      timeOffsetMs: Math.round(elapsedMs),
      action: { actionType: action.actionType, touchPosition: [action.touchPosition[0], action.touchPosition[1]] },
      reward: taken.reward,
      extras: taken.extras,
      ...(verdict ? { appScreen: verdict.match } : {}),
    };
    steps.push(rec);
    s.emit({ type: "step", serial, taskId: task.id, episodeIndex: opts.index, step: episodeSteps, reward: taken.reward, phasesMs: phases });
    if (obsFail) {
      end = obsFail;
      break;
    }
    obs!.extras = extrasByName(taken.extras);
    const tr = decideTransition(
      { episodeSteps, elapsedMs, appLeft: verdict?.left ?? false, episodeEnd: s.acc.episodeEnd },
      limits,
    );
    if (tr.last) {
      const detail =
        tr.cause === "app_left" ? `expected ${task.expectedAppScreen?.activity ?? "?"}, check said ${verdict?.match ?? "?"}` :
        tr.cause === "step_limit" ? `step ${episodeSteps} > max_episode_steps ${limits.maxEpisodeSteps}` :
        tr.cause === "time_limit" ? `${(elapsedMs / 1000).toFixed(3)} s > max_episode_sec ${timeLimitSec(limits.maxEpisodeSec)}` :
        "episode_end line";
      end = { outcome: tr.outcome, cause: tr.cause, detail };
    }
  }
  if (!end) end = trunc("reset_failed", "reset produced no observation");
  end = await refineCause(s, end);
  opts.signal?.removeEventListener("abort", onAbort);

  // Late reward lines of a truncated, still-running game belong to its last step (farm choice, default off).
  const lastStep = steps[steps.length - 1];
  if (c.finalLogDrainMs > 0 && lastStep && (end.cause === "step_limit" || end.cause === "time_limit" || end.cause === "cancelled")) {
    await sleep(c.finalLogDrainMs);
    const late = s.acc.take();
    lastStep.reward += late.reward;
    lastStep.extras.push(...late.extras);
  }
  s.acc.pause();

  // Bookkeeping (android_env's cause-named counters; bad episodes, §7.8).
  const counterKey: Partial<Record<EndCause, string>> = {
    episode_end: "reset_count_episode_end",
    step_limit: "reset_count_max_duration_reached",
    time_limit: "reset_count_max_duration_reached",
    app_left: "reset_count_user_exited",
  };
  s.count(counterKey[end.cause] ?? `episode_count_${end.cause}`);
  s.count("episodes");
  s.count("steps", episodeSteps);
  if (end.cause === "app_left") {
    s.badEpisodes++;
    if (s.badEpisodes >= c.maxBadEpisodes) {
      s.count("restart_count_max_bad_states");
      s.relaunchDue = `${s.badEpisodes} bad episodes in a row`;
      s.badEpisodes = 0;
    }
  } else if (!DEVICE_TROUBLE.has(end.cause)) s.badEpisodes = 0;

  const counters: Record<string, number> = { ...s.acc.counters };
  for (const [k, v] of Object.entries(resetCounters)) counters[`reset_${k}`] = v;
  const logcatMalformed = (s.logcat?.malformedLines ?? logcatMalformed0) - logcatMalformed0;
  if (logcatMalformed > 0) counters.logcat_malformed_lines = logcatMalformed;
  if (appScreenChecks > 0) counters.app_screen_checks = appScreenChecks;
  await frames.attach(steps, counters);
  const totalReward = steps.reduce((a, st) => a + st.reward, 0);
  const trajectory: EpisodeTrajectory = {
    taskId: task.id,
    taskHash: s.task.hash,
    deviceSerial: serial,
    policyName: policy.name,
    policyVersion: policy.version,
    seed: opts.seed,
    startedAt,
    endedAt: new Date(),
    outcome: end.outcome,
    cause: end.cause,
    causeDetail: end.detail,
    totalReward,
    steps,
    counters,
    episodeIndex: opts.index,
    dialect: s.task.dialect,
    limits,
    ...(initialExtras.length ? { initialExtras } : {}),
    ...(s.acc.lastScore !== undefined ? { finalScore: s.acc.lastScore } : {}),
    ...(frameEvery > 0 ? { frameEncoding: frames.encoding } : {}),
    resetKind,
    resetMs,
  };
  const durationMs = performance.now() - tEpisode;
  s.logger.info(
    { event: "episode:end", index: opts.index, seed: opts.seed, outcome: end.outcome, cause: end.cause, detail: end.detail, steps: episodeSteps, totalReward, durationMs },
    "episode finished",
  );
  s.emit({ type: "episode:end", serial, taskId: task.id, episodeIndex: opts.index, outcome: end.outcome, cause: end.cause, causeDetail: end.detail, steps: episodeSteps, totalReward, durationMs });
  assertCommittable(trajectory);
  if (opts.sink) await opts.sink(trajectory);

  if (DEVICE_TROUBLE.has(end.cause)) {
    s.count(`relaunch_count_${end.cause}`);
    const reason = `${end.cause}: ${end.detail}`;
    if (opts.deferRecovery) s.needRecovery(reason);
    else await s.recover(reason);
  } else if (end.cause !== "cancelled" && end.cause !== "policy_failed") s.markGood();
  return trajectory;
}
