/**
 * The runner on @farm/adb's FakeDevice (which passes the driver's conformance suite): fast unit tests, no adb
 * server, no simulator. The end-to-end behaviour on simulated emulators is in episode.integration.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { FakeDevice, type FakeApp } from "@farm/adb";
import { lift, touch, type Action, type Policy } from "@farm/policy";
import { DeviceSession, DeviceUnusableError, type EpisodeConfig, type EpisodeEvent } from "../src/index.ts";
import { APP, task } from "./fixtures.ts";

const FAST: EpisodeConfig = { settleMs: 0, stepTimeoutMs: 2000, resetTimeoutMs: 10_000, adbCallTimeoutMs: 2000, recoveryBackoffMs: 10, recoveryWaitMs: 200, appScreenCheckEverySteps: 0, finalLogDrainMs: 20 };

/** 2048 as a fake: `reward: 1` per touch down, `episode end` after `endAfter` touches (if given). */
function game(endAfter?: number): FakeApp {
  let touches = 0;
  return {
    onStart: () => {
      touches = 0;
    },
    onTouch: (app) => {
      touches++;
      app.log("reward: 1");
      app.log("extra: touches [" + touches + "]");
      if (endAfter !== undefined && touches >= endAfter) app.log("episode end");
    },
  };
}

/** Taps: TOUCH on even steps, LIFT on odd ones (a TOUCH while the finger is down would be a move). */
const tapping = (i: number): Action => (i % 2 === 0 ? touch(0.5, 0.5) : lift());

function policy(act: (i: number) => unknown = tapping): Policy {
  let i = 0;
  return {
    name: "test",
    version: "1",
    needsPixels: false,
    async reset() {
      i = 0;
    },
    async act() {
      return act(i++) as Action;
    },
    async close() {},
  };
}

async function open(dev: FakeDevice, opts: { maxEpisodeSteps?: number; config?: EpisodeConfig; events?: EpisodeEvent[] } = {}): Promise<DeviceSession> {
  const t = task({ id: "fake-2048", app: "twozero", ...(opts.maxEpisodeSteps !== undefined ? { maxEpisodeSteps: opts.maxEpisodeSteps } : {}) });
  const s = await DeviceSession.open({ device: dev, task: t, config: { ...FAST, ...opts.config }, ...(opts.events ? { onEvent: (e) => opts.events!.push(e) } : {}) });
  assert.equal(s.state, "ready", s.unusableReason);
  return s;
}

const gameDevice = (endAfter?: number) => new FakeDevice({ apps: { [APP.twozero.pkg]: game(endAfter) } });

test("step limit: N steps MID, step N+1 LAST; every touch's reward lands on its own step", async () => {
  const s = await open(gameDevice(), { maxEpisodeSteps: 4 });
  const t = await s.runEpisode({ seed: 1, index: 0, policy: policy() });
  assert.equal(t.cause, "step_limit");
  assert.equal(t.outcome, "truncated");
  assert.equal(t.steps.length, 5);
  assert.deepEqual(t.steps.map((x) => x.reward), [1, 0, 1, 0, 1]);
  assert.equal(t.totalReward, 3);
  assert.deepEqual(t.steps.map((x) => x.extras.map((e) => e.value)), [[[1]], [], [[2]], [], [[3]]]);
  assert.equal(s.stats.reset_count_max_duration_reached, 1);
  await s.close();
});

test("an episode_end line terminates the episode at its step", async () => {
  const events: EpisodeEvent[] = [];
  const s = await open(gameDevice(3), { events });
  const t = await s.runEpisode({ seed: 2, index: 7, policy: policy() });
  assert.equal(t.outcome, "terminated");
  assert.equal(t.cause, "episode_end");
  assert.equal(t.steps.length, 5, "touches at steps 1, 3 and 5");
  assert.equal(t.episodeIndex, 7);
  assert.deepEqual(events.filter((e) => e.type === "step").length, 5);
  assert.ok(events.some((e) => e.type === "episode:end" && e.steps === 5 && e.totalReward === 3));
  await s.close();
});

test("startEpisode: the caller drives reset / step / finish and gets what runEpisode gives", async () => {
  const s = await open(gameDevice(), { maxEpisodeSteps: 2 });
  const sunk: number[] = [];
  const run = await s.startEpisode({ seed: 3, index: 0, policy: policy(), sink: (t) => void sunk.push(t.steps.length) });
  await run.reset();
  let steps = 0;
  while (await run.step()) steps++;
  assert.equal(steps, 2, "two MID steps, then the LAST one answers false");
  assert.equal(run.ended, true);
  assert.equal(await run.step(), false, "no step after the end");
  const t = await run.finish();
  assert.equal(t.steps.length, 3);
  assert.deepEqual(sunk, [3]);
  await s.close();
});

test("an invalid action (position outside [0,1]²) ends the episode as policy_failed, the device stays ready", async () => {
  const s = await open(gameDevice());
  const t = await s.runEpisode({ seed: 4, index: 0, policy: policy((i) => (i < 2 ? touch(0.1, 0.1) : { actionType: "TOUCH", touchPosition: [1.5, 0.2] })) });
  assert.equal(t.cause, "policy_failed");
  assert.match(t.causeDetail, /invalid action: touchPosition/);
  assert.equal(t.steps.length, 2);
  assert.equal(s.state, "ready");
  await s.close();
});

test("a hung device: device_hung within the step deadline; deferRecovery leaves needs_recovery; recover() after the hang", async () => {
  const dev = gameDevice();
  const s = await open(dev, { config: { stepTimeoutMs: 300 } });
  const t = await s.runEpisode({ seed: 5, index: 0, deferRecovery: true, policy: policy((i) => (i === 2 && dev.hang(true), tapping(i))) });
  assert.equal(t.cause, "device_hung");
  assert.equal(t.steps.length, 2);
  assert.equal(s.state, "needs_recovery");
  assert.match(s.pendingRecovery ?? "", /^device_hung: action did not complete in 300 ms/);
  dev.hang(false);
  assert.equal(await s.recover(), true);
  assert.equal(s.state, "ready");
  const again = await s.runEpisode({ seed: 6, index: 1, policy: policy(), limits: { maxEpisodeSteps: 1 } });
  assert.equal(again.cause, "step_limit");
  await s.close();
});

test("a dropped device: device_lost, recovery budget spent → unusable, the next episode throws DeviceUnusableError", async () => {
  const dev = gameDevice();
  const events: EpisodeEvent[] = [];
  const s = await open(dev, { config: { maxRecoveries: 2 }, events });
  const t = await s.runEpisode({ seed: 7, index: 0, policy: policy((i) => (i === 2 && dev.drop(), tapping(i))) });
  assert.equal(t.cause, "device_lost");
  assert.equal(s.state, "unusable");
  assert.equal(events.filter((e) => e.type === "device:recovery").length, 2);
  await assert.rejects(s.runEpisode({ seed: 8, index: 1, policy: policy() }), (e: unknown) => e instanceof DeviceUnusableError && e.code === "device_unusable");
  await s.close();
});

test("cancel: aborting ends the episode as cancelled at the next step boundary", async () => {
  const s = await open(gameDevice());
  const ac = new AbortController();
  const t = await s.runEpisode({ seed: 9, index: 0, signal: ac.signal, policy: policy((i) => (i === 3 && ac.abort(), tapping(i))) });
  assert.equal(t.cause, "cancelled");
  assert.equal(t.steps.length, 4, "the step whose act() saw the abort still completes; the next boundary ends the episode");
  assert.equal(s.state, "ready");
  await s.close();
});

test("a bad per-episode limit is the caller's error (RangeError) before anything runs", async () => {
  const s = await open(gameDevice());
  await assert.rejects(s.runEpisode({ seed: 1, index: 0, policy: policy(), limits: { stepTimeoutMs: 0 } }), RangeError);
  assert.equal(s.stats.episodes ?? 0, 0);
  await s.close();
});
