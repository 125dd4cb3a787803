/**
 * The runner against simulated devices through a real (private) adb server: rewards, termination,
 * limits, app-left, extras, failures and recovery, reproducibility.
 */
import sharp from "sharp";
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { AdbDriver } from "@farm/adb";
import { randomPolicy, type Action, type Observation, type Policy } from "@farm/policy";
import { parseTaskText, type LoadedTask } from "@farm/task";
import { DeviceSession, type EpisodeConfig, type EpisodeEvent, type EpisodeTrajectory } from "../src/index.ts";
import { APK_DIR, REPO, task } from "./fixtures.ts";

type Sim = Awaited<ReturnType<typeof startSimulatedDevices>>;
type SimDev = Sim["devices"][number];

let adb: LocalAdbServer;
let sim: Sim;
let driver: AdbDriver;
let nextDevice = 0;
const DEVICES = 19;

before(async () => {
  adb = await startAdbServer();
  sim = await startSimulatedDevices({ adbPort: adb.port, count: DEVICES });
  driver = new AdbDriver({ host: "127.0.0.1", port: adb.port, actionTimeoutMs: 1500, queryTimeoutMs: 1500 });
});

after(async () => {
  await (driver as unknown as { close?: () => Promise<void> }).close?.();
  await sim?.close();
  await adb?.close();
});

/** Each test gets its own simulated device, so a fault in one cannot touch another. */
function takeDevice(): SimDev {
  const d = sim.devices[nextDevice++];
  assert.ok(d, "not enough simulated devices");
  return d;
}

const FAST: EpisodeConfig = { settleMs: 20, stepTimeoutMs: 2000, resetTimeoutMs: 15_000, adbCallTimeoutMs: 2000, recoveryBackoffMs: 100, recoveryWaitMs: 3000, appScreenCheckEverySteps: 0 };

async function open(t: LoadedTask, simDev: SimDev, config: EpisodeConfig = {}, events?: EpisodeEvent[]): Promise<DeviceSession> {
  const s = await DeviceSession.open({ device: driver.device(simDev.serial), task: t, config: { ...FAST, ...config }, ...(events ? { onEvent: (e) => events.push(e) } : {}) });
  assert.equal(s.state, "ready", s.unusableReason);
  return s;
}

/** A policy from a function of the step index (0-based act() calls since reset). */
function policyOf(name: string, fn: (i: number, obs: Observation) => Action | Promise<Action>): Policy {
  let i = 0;
  return {
    name,
    version: "1",
    needsPixels: false,
    async reset() {
      i = 0;
    },
    async act(obs) {
      return fn(i++, obs);
    },
    async close() {},
  };
}
const touch = (x: number, y: number): Action => ({ actionType: "TOUCH", touchPosition: [x, y] });
const lift = (): Action => ({ actionType: "LIFT", touchPosition: [0, 0] });
const tapAt = (x: number, y: number) => (i: number) => (i % 2 === 0 ? touch(x, y) : lift());
/** Taps in the middle; at act() call `at` the device hangs and answers again `forMs` later. */
const hangsAt = (dev: SimDev, at: number, forMs: number): Policy =>
  policyOf("hang", (i) => {
    if (i === at) {
      dev.faults.hang(true);
      setTimeout(() => dev.faults.hang(false), forMs);
    }
    return tapAt(0.5, 0.5)(i);
  });

const TWOZERO_SPEC = 'extras_spec: [{ name: "grid" shape: [4, 4] dtype: INT32 }, { name: "direction" shape: [1] dtype: INT32 }]';

test("2048: a random episode's summed rewards equal the app's final score; grid/direction extras per step with the spec's shape", async () => {
  const dev = takeDevice();
  const s = await open(task({ id: "e2048", app: "twozero", maxEpisodeSteps: 400, extrasSpec: TWOZERO_SPEC }), dev, { logSettleMs: 5 });
  try {
    const t = await s.runEpisode({ seed: 11, index: 0, policy: randomPolicy() });
    assert.ok(t.cause === "episode_end" || t.cause === "step_limit", `${t.cause}: ${t.causeDetail}`);
    assert.ok(t.totalReward > 0, "random swipes score in 2048");
    const appScore = await appFinalScore(dev.serial);
    assert.ok(appScore > 0);
    assert.equal(t.totalReward, appScore, "summed rewards = the app's final score");
    assert.equal(t.finalScore, appScore);
    let grids = 0;
    for (const st of t.steps) {
      for (const e of st.extras) {
        if (e.name === "grid") {
          grids++;
          assert.deepEqual(e.shape, [4, 4]);
          assert.equal(e.dtype, "INT32");
        } else if (e.name === "direction") assert.deepEqual(e.shape, [1]);
      }
    }
    assert.ok(grids > 0, "grid extras arrived");
    assert.equal(t.counters.extras_dropped ?? 0, 0);
  } finally {
    await s.close();
  }
});

/** The app's final score, read independently of the runner: the last `score:` line in a logcat dump (fresh session, one game). */
async function appFinalScore(serial: string): Promise<number> {
  const r = await driver.device(serial).shell("logcat -d -v epoch AndroidRLTask:V *:S");
  assert.equal(r.status, "ok", r.message);
  const scores = [...r.stdout.matchAll(/AndroidRLTask: score: (\d+)/g)].map((m) => Number(m[1]));
  assert.ok(scores.length > 0, "the app logged its score");
  return scores[scores.length - 1]!;
}

test("2048: the same seed reproduces the same episode (actions, steps, rewards)", async () => {
  // logSettleMs: the app logs while it handles the action; wait for those lines so each reward lands on its own step.
  const s = await open(task({ id: "e2048r", app: "twozero", maxEpisodeSteps: 60 }), takeDevice(), { logSettleMs: 20 });
  try {
    const a = await s.runEpisode({ seed: 5, index: 0, policy: randomPolicy() });
    const b = await s.runEpisode({ seed: 5, index: 1, policy: randomPolicy() });
    const c = await s.runEpisode({ seed: 6, index: 2, policy: randomPolicy() });
    const view = (t: EpisodeTrajectory) => t.steps.map((st) => [st.action.actionType, ...st.action.touchPosition, st.reward]);
    assert.equal(a.steps.length, b.steps.length);
    assert.deepEqual(view(a), view(b));
    assert.equal(a.totalReward, b.totalReward);
    assert.equal(a.cause, b.cause);
    assert.notDeepEqual(view(a), view(c), "another seed plays another game");
  } finally {
    await s.close();
  }
});

test("step limit: max_episode_steps = N gives N+1 steps, truncated as step_limit", async () => {
  const s = await open(task({ id: "esteps", app: "twozero", maxEpisodeSteps: 7 }), takeDevice());
  try {
    const t = await s.runEpisode({ seed: 1, index: 0, policy: randomPolicy() });
    assert.equal(t.outcome, "truncated");
    assert.equal(t.cause, "step_limit");
    assert.equal(t.steps.length, 8);
    assert.deepEqual(t.steps.map((x) => x.index), [1, 2, 3, 4, 5, 6, 7, 8]);
  } finally {
    await s.close();
  }
});

test("per-episode limits override the task's for that episode only and are recorded on the trajectory", async () => {
  const s = await open(task({ id: "eoverride", app: "twozero", maxEpisodeSteps: 6 }), takeDevice());
  try {
    const a = await s.runEpisode({ seed: 1, index: 0, policy: randomPolicy(), limits: { maxEpisodeSteps: 2, stepTimeoutMs: 1500 } });
    assert.equal(a.cause, "step_limit");
    assert.equal(a.steps.length, 3, "override N = 2: steps 1..2 MID, step 3 LAST");
    assert.match(a.causeDetail, /max_episode_steps 2$/);
    assert.deepEqual(a.limits, { maxEpisodeSteps: 2, maxEpisodeSec: 0, stepTimeoutMs: 1500, maxInvalidActions: 0, policyTimeoutMs: 30_000 });
    const b = await s.runEpisode({ seed: 1, index: 1, policy: randomPolicy() });
    assert.equal(b.cause, "step_limit");
    assert.equal(b.steps.length, 7, "without an override the task's max_episode_steps 6 applies again");
    assert.deepEqual(b.limits, { maxEpisodeSteps: 6, maxEpisodeSec: 0, stepTimeoutMs: 2000, maxInvalidActions: 0, policyTimeoutMs: 30_000 });
    await assert.rejects(s.runEpisode({ seed: 1, index: 2, policy: randomPolicy(), limits: { stepTimeoutMs: 0 } }), RangeError);
    assert.equal(s.state, "ready", "a bad override is refused before anything runs");
  } finally {
    await s.close();
  }
});

test("time limit: int(max_episode_sec) compared strictly, from the end of the reset", async () => {
  const slow = policyOf("slow", async (i) => {
    await new Promise((r) => setTimeout(r, 100));
    return tapAt(0.5, 0.5)(i);
  });
  const s = await open(task({ id: "etime", app: "twozero", maxEpisodeSec: 1.9 }), takeDevice());
  try {
    const t = await s.runEpisode({ seed: 1, index: 0, policy: slow });
    assert.equal(t.cause, "time_limit");
    const last = t.steps[t.steps.length - 1]!;
    assert.ok(last.timeOffsetMs >= 1000, `last step at ${last.timeOffsetMs} ms`);
    assert.ok(t.steps.slice(0, -1).every((x) => x.timeOffsetMs <= 1000), "1.9 acts as 1: every earlier step was within 1 s");
  } finally {
    await s.close();
  }
});

test("Catch: episode_end terminates; lives/ball/paddle extras arrive with the spec's shapes", async () => {
  const spec = 'extras_spec: [{ name: "lives" shape: [1] dtype: INT32 }, { name: "ball" shape: [2] dtype: INT32 }, { name: "paddle" shape: [2] dtype: INT32 }, { name: "paddle_width" shape: [1] dtype: INT32 }]';
  // ~1 s of play: a game that ended during the reset would be lost (lines are discarded while paused, as upstream).
  const s = await open(task({ id: "ecatch", app: "catch", gameConfig: '{"lives":3,"speed":3,"tick_ms":10,"paddle_width":4}', maxEpisodeSec: 20, extrasSpec: spec }), takeDevice());
  try {
    const t = await s.runEpisode({ seed: 3, index: 0, policy: policyOf("idle", async () => (await new Promise((r) => setTimeout(r, 5)), { actionType: "REPEAT", touchPosition: [0, 0] })) });
    assert.equal(t.outcome, "terminated", t.causeDetail);
    assert.equal(t.cause, "episode_end");
    const names = new Set([...(t.initialExtras ?? []), ...t.steps.flatMap((x) => x.extras)].map((e) => `${e.name}:${e.shape.join("x")}`));
    for (const want of ["ball:2", "paddle:2"]) assert.ok(names.has(want), `${want} in ${[...names].join(", ")}`);
    assert.ok(names.has("lives:1"), [...names].join(", "));
    assert.equal(t.counters.extras_dropped ?? 0, 0);
  } finally {
    await s.close();
  }
});

test("extras_spec is enforced: a value of the wrong shape is dropped, counted and reported", async () => {
  const events: EpisodeEvent[] = [];
  const spec = 'extras_spec: [{ name: "grid" shape: [3, 3] dtype: INT32 }]';
  const s = await open(task({ id: "espec", app: "twozero", maxEpisodeSteps: 30, extrasSpec: spec }), takeDevice(), { logSettleMs: 5 }, events);
  try {
    const t = await s.runEpisode({ seed: 2, index: 0, policy: randomPolicy() });
    const all = [...(t.initialExtras ?? []), ...t.steps.flatMap((x) => x.extras)];
    assert.equal(all.filter((e) => e.name === "grid").length, 0, "no wrong-shape grid written");
    assert.ok((t.counters.extras_dropped ?? 0) > 0);
    assert.ok(events.some((e) => e.type === "extra:dropped" && e.name === "grid" && e.reason === "shape"));
  } finally {
    await s.close();
  }
});

const EXIT = tapAt(0.5, 0.85);

test("Sim Notes: leaving the app truncates with cause app_left; pinning prevents leaving", async () => {
  const s = await open(task({ id: "enotes", app: "notes", maxEpisodeSteps: 10 }), takeDevice(), { appScreenCheckEverySteps: 1 });
  try {
    const t = await s.runEpisode({ seed: 1, index: 0, policy: policyOf("exit", EXIT) });
    assert.equal(t.outcome, "truncated");
    assert.equal(t.cause, "app_left", t.causeDetail);
    assert.equal(t.steps.length, 2, "the tap is TOUCH+LIFT; the check at step 2 sees the launcher");
    assert.equal(t.steps[1]!.appScreen, "UNEXPECTED_ACTIVITY");
  } finally {
    await s.close();
  }
  const pin = '{ adb_request: { start_screen_pinning: { full_activity: "com.farm.simapps.notes/com.farm.simapps.notes.MainActivity" } } }';
  const p = await open(task({ id: "enotesp", app: "notes", maxEpisodeSteps: 6, extraResetSteps: [pin] }), takeDevice(), { appScreenCheckEverySteps: 1 });
  try {
    const t = await p.runEpisode({ seed: 1, index: 0, policy: policyOf("exit", EXIT) });
    assert.equal(t.cause, "step_limit", t.causeDetail);
    assert.ok(t.steps.every((x) => x.appScreen === "SUCCESS"));
  } finally {
    await p.close();
  }
});

test("Sim Notes: json_extra and rewards arrive at the step that caused them; the target note terminates", async () => {
  // Open note 0 (wrong: -0.1 and json_extra opened=0), Back, open note 2 (target: reward 1, episode end).
  const script = [touch(0.5, 0.2), lift(), touch(0.2, 0.9), lift(), touch(0.5, 0.6), lift(), lift()];
  const s = await open(task({ id: "enotesx", app: "notes", maxEpisodeSteps: 20 }), takeDevice(), { logSettleMs: 30 });
  try {
    const t = await s.runEpisode({ seed: 1, index: 0, policy: policyOf("script", (i) => script[i] ?? lift()) });
    assert.equal(t.cause, "episode_end", t.causeDetail);
    const opened = t.steps.filter((x) => x.extras.some((e) => e.name === "opened"));
    assert.deepEqual(opened.map((x) => x.index), [2, 6], "the taps complete on LIFT");
    assert.deepEqual(opened.map((x) => x.extras.find((e) => e.name === "opened")!.value), [0, 2]);
    assert.ok(Math.abs(t.totalReward - 0.9) < 1e-9, `reward ${t.totalReward}`);
    assert.equal(t.steps.length, 6);
  } finally {
    await s.close();
  }
});

test("a failing reset step ends as reset_failed; setup is re-run; past the budget the device is unusable", async () => {
  const events: EpisodeEvent[] = [];
  const bad = task({ id: "ebadreset", app: "twozero", startActivity: "com.tpcstld.twozerogame/com.tpcstld.twozerogame.NoSuchActivity" });
  const s = await open(bad, takeDevice(), { maxRecoveries: 2 }, events);
  try {
    const t1 = await s.runEpisode({ seed: 1, index: 0, policy: randomPolicy() });
    assert.equal(t1.outcome, "truncated");
    assert.equal(t1.cause, "reset_failed");
    assert.match(t1.causeDetail, /reset step 2/);
    assert.equal(t1.steps.length, 0);
    assert.equal(s.state, "ready", "recovered: setup re-ran");
    const t2 = await s.runEpisode({ seed: 2, index: 1, policy: randomPolicy() });
    assert.equal(t2.cause, "reset_failed");
    assert.equal(s.state, "ready");
    await s.runEpisode({ seed: 3, index: 2, policy: randomPolicy() });
    assert.equal(s.state, "unusable");
    assert.equal(events.filter((e) => e.type === "device:recovery" && e.ok).length, 2);
    assert.equal(events.filter((e) => e.type === "device:unusable").length, 1);
    await assert.rejects(s.runEpisode({ seed: 4, index: 3, policy: randomPolicy() }), { code: "device_unusable" });
  } finally {
    await s.close();
  }
});

test("a hung device ends the step as device_hung; it recovers once it answers again", async () => {
  const dev = takeDevice();
  const events: EpisodeEvent[] = [];
  const s = await open(task({ id: "ehang", app: "twozero", maxEpisodeSteps: 50 }), dev, { stepTimeoutMs: 800, recoveryWaitMs: 1500 }, events);
  try {
    const t = await s.runEpisode({ seed: 1, index: 0, policy: hangsAt(dev, 3, 1500) });
    assert.equal(t.outcome, "truncated");
    assert.equal(t.cause, "device_hung", t.causeDetail);
    assert.equal(t.steps.length, 3);
    assert.equal(s.state, "ready", "recovered after the device answered again");
    assert.ok(events.some((e) => e.type === "device:recovery" && e.ok));
    const t2 = await s.runEpisode({ seed: 1, index: 1, policy: randomPolicy() });
    assert.equal(t2.cause, "step_limit");
  } finally {
    await s.close();
  }
});

test("deferRecovery: a hung device's episode returns with the session needing recovery; recover() brings it back", async () => {
  const dev = takeDevice();
  const events: EpisodeEvent[] = [];
  const s = await open(task({ id: "edefer", app: "twozero", maxEpisodeSteps: 5 }), dev, { stepTimeoutMs: 800, recoveryWaitMs: 1500 }, events);
  try {
    const t = await s.runEpisode({ seed: 1, index: 0, policy: hangsAt(dev, 3, 1500), deferRecovery: true });
    assert.equal(t.cause, "device_hung", t.causeDetail);
    assert.equal(s.state, "needs_recovery");
    assert.match(s.pendingRecovery ?? "", /^device_hung: /);
    assert.equal(events.filter((e) => e.type === "device:recovery").length, 0, "no recovery inside runEpisode");
    assert.equal(await s.recover(), true);
    assert.equal(s.state, "ready");
    assert.equal(s.pendingRecovery, undefined);
    assert.ok(events.some((e) => e.type === "device:recovery" && e.ok));
    const t2 = await s.runEpisode({ seed: 1, index: 1, policy: randomPolicy(), deferRecovery: true });
    assert.equal(t2.cause, "step_limit");
    assert.equal(s.state, "ready", "an episode without device trouble needs no recovery");
  } finally {
    dev.faults.hang(false);
    await s.close();
  }
});

test("a device that stays hung is reported unusable after the recovery budget", async () => {
  const dev = takeDevice();
  const events: EpisodeEvent[] = [];
  const s = await open(task({ id: "ehang2", app: "twozero", maxEpisodeSteps: 50 }), dev, { stepTimeoutMs: 500, recoveryWaitMs: 400, maxRecoveries: 2, resetTimeoutMs: 1500 }, events);
  try {
    const t = await s.runEpisode({ seed: 1, index: 0, policy: policyOf("hang", (i) => (i === 1 && dev.faults.hang(true), tapAt(0.5, 0.5)(i))) });
    assert.equal(t.cause, "device_hung");
    assert.equal(s.state, "unusable");
    assert.equal(events.filter((e) => e.type === "device:recovery").length, 2);
    assert.match(s.unusableReason, /device_hung/);
  } finally {
    dev.faults.hang(false);
    await s.close();
  }
});

test("a dropped device ends the episode as device_lost and recovers when it comes back", async () => {
  const dev = takeDevice();
  const s = await open(task({ id: "edrop", app: "twozero", maxEpisodeSteps: 50 }), dev, { stepTimeoutMs: 1000, recoveryWaitMs: 3000 });
  try {
    const t = await s.runEpisode({
      seed: 1,
      index: 0,
      policy: policyOf("drop", (i) => {
        if (i === 2) {
          dev.faults.dropConnection();
          setTimeout(() => dev.faults.reconnect(), 800);
        }
        return tapAt(0.5, 0.5)(i);
      }),
    });
    assert.equal(t.outcome, "truncated");
    assert.equal(t.cause, "device_lost", t.causeDetail);
    assert.equal(s.state, "ready");
    const t2 = await s.runEpisode({ seed: 1, index: 1, policy: randomPolicy() });
    assert.equal(t2.cause, "step_limit");
  } finally {
    await s.close();
  }
});

test("observations: pixels only for a policy that asks; PNG frames every k steps; timedelta and orientation", async () => {
  const seen: Observation[] = [];
  const pixelPolicy: Policy = { ...policyOf("pix", (i, obs) => (seen.push(obs), tapAt(0.5, 0.5)(i))), needsPixels: true };
  const s = await open(task({ id: "epix", app: "twozero", maxEpisodeSteps: 4 }), takeDevice());
  try {
    const t = await s.runEpisode({ seed: 1, index: 0, policy: pixelPolicy, frameEvery: 2 });
    assert.equal(t.steps.length, 5);
    assert.equal(seen.length, 5);
    for (const o of seen) {
      assert.ok(o.pixels, "pixels present");
      assert.equal(o.pixels!.rgb.length, o.screen.width * o.screen.height * 3);
      assert.equal(o.orientation, 0);
    }
    assert.equal(seen[0]!.timedeltaUs, 0, "0 right after reset");
    assert.ok(seen[1]!.timedeltaUs > 0);
    assert.deepEqual(t.steps.map((x) => x.frame !== undefined), [false, true, false, true, false]);
    assert.deepEqual([...t.steps[1]!.frame!.subarray(1, 4)].map((b) => String.fromCharCode(b)).join(""), "PNG");
    const blind: Observation[] = [];
    await s.runEpisode({ seed: 1, index: 1, policy: policyOf("blind", (i, obs) => (blind.push(obs), tapAt(0.5, 0.5)(i))) });
    assert.ok(blind.every((o) => o.pixels === undefined), "no pixels for a policy that does not ask");
  } finally {
    await s.close();
  }
});

test("frames: the recorded PNG is the screen the policy saw; a campaign's JPEG encoding and size are what is stored", async () => {
  const seen: Observation[] = [];
  const pixelPolicy: Policy = { ...policyOf("pix", (i, obs) => (seen.push(obs), tapAt(0.3 + 0.1 * (i % 4), 0.5)(i))), needsPixels: true };
  const s = await open(task({ id: "eframes", app: "twozero", maxEpisodeSteps: 3 }), takeDevice());
  try {
    const t = await s.runEpisode({ seed: 2, index: 0, policy: pixelPolicy, frameEvery: 1 });
    assert.equal(t.frameEncoding, "png");
    assert.equal(t.steps.length, 4);
    assert.ok(t.steps.every((st) => st.frame), "a step without its frame");
    // The policy saw the observation after step k as its k-th observation (not the one after the last step).
    for (const st of t.steps.filter((x) => x.index < seen.length)) {
      const { data, info } = await sharp(st.frame!).raw().toBuffer({ resolveWithObject: true });
      const obs = seen[st.index]!;
      assert.deepEqual([info.width, info.height], [obs.screen.width, obs.screen.height]);
      assert.ok(data.equals(Buffer.from(obs.pixels!.rgb)), `step ${st.index}: the stored frame is not the observation the policy got`);
    }
    const blind = policyOf("blind", tapAt(0.5, 0.5));
    const j = await s.runEpisode({ seed: 2, index: 1, policy: blind, frameEvery: 2, frameEncoding: { format: "jpeg", quality: 70, size: { width: 90, height: 160 } } });
    assert.equal(j.frameEncoding, "jpeg:70@90x160");
    const stored = j.steps.filter((x) => x.frame);
    assert.deepEqual(stored.map((x) => x.index), j.steps.map((x) => x.index).filter((i) => i % 2 === 0));
    for (const st of stored) {
      const meta = await sharp(st.frame!).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ["jpeg", 90, 160]);
    }
    const none = await s.runEpisode({ seed: 2, index: 2, policy: blind });
    assert.equal(none.frameEncoding, undefined);
    assert.ok(none.steps.every((x) => x.frame === undefined));
  } finally {
    await s.close();
  }
});

test("a failing policy ends as policy_failed and a caller's abort as cancelled; neither sends the device through recovery", async () => {
  const events: EpisodeEvent[] = [];
  const s = await open(task({ id: "epol", app: "twozero", maxEpisodeSteps: 1000 }), takeDevice(), {}, events);
  try {
    const throwing = policyOf("throws", (i) => {
      if (i === 2) throw new Error("model crashed");
      return tapAt(0.5, 0.5)(i);
    });
    const t1 = await s.runEpisode({ seed: 1, index: 0, policy: throwing });
    assert.equal(t1.cause, "policy_failed");
    assert.match(t1.causeDetail, /model crashed/);
    assert.equal(t1.steps.length, 2);
    const t2 = await s.runEpisode({ seed: 1, index: 1, policy: policyOf("bad", () => ({ actionType: "JUMP", touchPosition: [0, 0] }) as unknown as Action) });
    assert.equal(t2.cause, "policy_failed");
    assert.match(t2.causeDetail, /invalid action/);
    const ac = new AbortController();
    const t3 = await s.runEpisode({ seed: 1, index: 2, signal: ac.signal, policy: policyOf("abort", (i) => (i === 5 && ac.abort(), tapAt(0.5, 0.5)(i))) });
    assert.equal(t3.outcome, "truncated");
    assert.equal(t3.cause, "cancelled");
    assert.equal(s.state, "ready");
    assert.equal(events.filter((e) => e.type === "device:recovery").length, 0);
    const ends = events.filter((e) => e.type === "episode:end").map((e) => (e as { cause: string }).cause);
    assert.deepEqual(ends, ["policy_failed", "policy_failed", "cancelled"]);
  } finally {
    await s.close();
  }
});

test("legacy wait_for_message: the line the app logs while the step runs (before the settle) is seen", async () => {
  const text = `
id: "legacy_wait"
package_name: "com.tpcstld.twozerogame"
setup_steps: [ { adb_call: { install_apk: { filesystem: { path: "classic_2048.apk" } } } success_condition: { check_install: { package_name: "com.tpcstld.twozerogame" timeout_sec: 10.0 } } } ]
reset_steps: [
  { adb_call: { force_stop: { package_name: "com.tpcstld.twozerogame" } } },
  { adb_call: { start_activity: { full_activity: "com.tpcstld.twozerogame/com.tpcstld.twozerogame.MainActivity" extra_args: ["--ez", '"RL_TASK_ENABLED"', '"true"'] } }
    success_condition: { wait_for_message: { message: "^extra: grid " timeout_sec: 1.0 } } }
]
max_num_steps: 2
log_parsing_config: { filters: ["AndroidRLTask:V"] log_regexps: { score: "^score: ([0-9]+)$" episode_end: "^episode end$" } }
`;
  const t = parseTaskText(text, { sourcePath: `${REPO}/tasks/legacy_wait.textproto`, apkDirs: [APK_DIR] });
  assert.equal(t.dialect, "seed-2021");
  const events: EpisodeEvent[] = [];
  const s = await open(t, takeDevice(), { settleMs: 300 }, events);
  try {
    const traj = await s.runEpisode({ seed: 1, index: 0, policy: randomPolicy() });
    assert.equal(traj.cause, "step_limit", traj.causeDetail);
    assert.equal(traj.steps.length, 3);
    const start = events.find((e) => e.type === "episode:start") as { resetMs: number };
    assert.ok(start.resetMs < 1500, `one attempt, no timeout: reset took ${start.resetMs} ms`);
    assert.equal(s.stats.error_count_wait_for_message ?? 0, 0);
  } finally {
    await s.close();
  }
});
