/**
 * The runner with a task instance (`RunEpisodeOptions.instance`) on @farm/adb's FakeDevice: the instance's goal is
 * the episode's and the policy's, its parameters are recorded, a mid-episode score of 1 ends the episode as
 * goal_reached, the final score's reward lands on the last step, a set-up failure is reset_failed, a scoring
 * error is recorded and counted (never a 0), and the instance is always closed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { FakeDevice, type FakeApp } from "@farm/adb";
import { lift, touch, type Action, type Policy } from "@farm/policy";
import type { DeviceCalls, TaskInstance, TaskScore } from "@farm/scoring";
import { DeviceSession, type EpisodeConfig } from "../src/index.ts";
import { APP, task } from "./fixtures.ts";

const FAST: EpisodeConfig = { settleMs: 0, stepTimeoutMs: 2000, resetTimeoutMs: 10_000, adbCallTimeoutMs: 2000, recoveryBackoffMs: 10, recoveryWaitMs: 200, appScreenCheckEverySteps: 0, finalLogDrainMs: 0 };

const quiet: FakeApp = {};

function policy(seen: { goals: string[] }): Policy {
  let i = 0;
  return {
    name: "test",
    version: "1",
    needsPixels: false,
    async reset(r) {
      i = 0;
      seen.goals.push(r.goal ?? "");
    },
    async act(obs) {
      seen.goals.push(obs.goal ?? "");
      return (i++ % 2 === 0 ? touch(0.5, 0.5) : lift()) as Action;
    },
    async close() {},
  };
}

/** An instance whose scores follow `scores` (the last one repeats); records what the runner did with it. */
function fakeInstance(opts: { everySteps?: number; scores: TaskScore[]; failInit?: string }) {
  const log = { inits: 0, scores: [] as { final: boolean; answer?: string }[], closed: 0, device: undefined as DeviceCalls | undefined };
  let n = 0;
  const inst: TaskInstance = {
    everySteps: opts.everySteps ?? 0,
    async initialize(device) {
      log.inits++;
      log.device = device;
      if (opts.failInit) throw new Error(opts.failInit);
      return { goal: "Turn Wi-Fi on.", params: { state: "on", level: 3 } };
    },
    async score(_device, ctx) {
      log.scores.push({ final: ctx.final, ...(ctx.answer !== undefined ? { answer: ctx.answer } : {}) });
      return opts.scores[Math.min(n++, opts.scores.length - 1)]!;
    },
    async close() {
      log.closed++;
    },
  };
  return { inst, log };
}

async function open(maxEpisodeSteps = 10): Promise<DeviceSession> {
  const dev = new FakeDevice({ apps: { [APP.twozero.pkg]: quiet } });
  const s = await DeviceSession.open({ device: dev, task: task({ id: "fam", app: "twozero", maxEpisodeSteps }), config: FAST });
  assert.equal(s.state, "ready", s.unusableReason);
  return s;
}

const fail: TaskScore = { success: 0, reward: 0, checks: [{ name: "wifi", kind: "setting", passed: false, observed: "0", expected: '== "1"' }] };
const pass: TaskScore = { success: 1, reward: 1, checks: [{ name: "wifi", kind: "setting", passed: true, observed: "1", expected: '== "1"' }] };

test("the instance's goal reaches the policy and the trajectory; params recorded; the final score's reward is added to the last step", async () => {
  const s = await open(4);
  const seen = { goals: [] as string[] };
  const { inst, log } = fakeInstance({ scores: [pass] });
  const t = await s.runEpisode({ seed: 1, index: 0, policy: policy(seen), goal: "the job's goal", instance: inst });
  assert.equal(t.cause, "step_limit");
  assert.equal(t.goal, "Turn Wi-Fi on.");
  assert.ok(seen.goals.length > 1 && seen.goals.every((g) => g === "Turn Wi-Fi on."));
  assert.deepEqual({ ...t.params }, { state: "on", level: 3 });
  assert.equal(t.success, 1);
  assert.deepEqual(t.checks, pass.checks);
  assert.equal(t.scoreError, undefined);
  assert.equal(t.steps.at(-1)!.reward, 1);
  assert.equal(t.totalReward, 1);
  assert.deepEqual(log.scores, [{ final: true }]);
  assert.equal(log.closed, 1);
  assert.equal(typeof log.device?.execute, "function");
  assert.equal(t.counters.instance_scores, 1);
  assert.ok(t.counters.instance_score_ms! >= 0);
  await s.close();
});

test("every_steps: scored after every 2nd step; success 1 ends the episode terminated as goal_reached", async () => {
  const s = await open(50);
  const { inst, log } = fakeInstance({ everySteps: 2, scores: [fail, fail, pass] });
  const t = await s.runEpisode({ seed: 1, index: 0, policy: policy({ goals: [] }), instance: inst });
  assert.deepEqual([t.outcome, t.cause], ["terminated", "goal_reached"]);
  assert.match(t.causeDetail, /success 1 at step 6/);
  assert.equal(t.steps.length, 6);
  assert.deepEqual(log.scores.map((x) => x.final), [false, false, false, true]);
  assert.equal(t.success, 1);
  assert.equal(t.counters.instance_scores, 4);
  await s.close();
});

test("a set-up failure ends the episode reset_failed with the instance's reason; nothing is scored; the instance is closed", async () => {
  const s = await open();
  const { inst, log } = fakeInstance({ scores: [pass], failInit: "family wifi_set (/t/wifi.family.yaml:9): set-up step 1 (shell): boom" });
  const t = await s.runEpisode({ seed: 1, index: 0, policy: policy({ goals: [] }), instance: inst });
  assert.equal(t.cause, "reset_failed");
  assert.match(t.causeDetail, /task instance set-up: family wifi_set .*:9\): set-up step 1 \(shell\): boom/);
  assert.equal(log.scores.length, 0);
  assert.equal(log.closed, 1);
  assert.equal(t.success, undefined);
  assert.equal(t.scoreError, undefined);
  await s.close();
});

test("a scoring error is recorded and counted, with no success and no reward; a throwing instance is an error too", async () => {
  const s = await open(3);
  const err: TaskScore = { reward: 5, checks: [{ name: "db", kind: "sql", passed: false, observed: "", expected: '== "1"', error: "no database at /data/x.db" }], error: "db: no database at /data/x.db" };
  const { inst } = fakeInstance({ scores: [err] });
  const t = await s.runEpisode({ seed: 1, index: 0, policy: policy({ goals: [] }), instance: inst });
  assert.equal(t.success, undefined);
  assert.equal(t.scoreError, "db: no database at /data/x.db");
  assert.equal(t.checks![0]!.error, "no database at /data/x.db");
  assert.equal(t.totalReward, 0);
  assert.equal(t.counters.instance_score_errors, 1);
  const throwing: TaskInstance = { everySteps: 0, initialize: async () => ({ goal: "", params: {} }), score: async () => Promise.reject(new Error("server went away")), close: async () => {} };
  const t2 = await s.runEpisode({ seed: 1, index: 1, policy: policy({ goals: [] }), instance: throwing, goal: "kept" });
  assert.equal(t2.goal, "kept", "an instance without a goal keeps the episode's");
  assert.equal(t2.scoreError, "server went away");
  await s.close();
});

test("no step to carry it: the final reward goes to a step recorded for it", async () => {
  const s = await open(0);
  const { inst } = fakeInstance({ scores: [{ ...pass, reward: 2 }] });
  const t = await s.runEpisode({ seed: 1, index: 0, policy: { ...policy({ goals: [] }), act: async () => Promise.reject(new Error("no model")) }, instance: inst });
  assert.equal(t.cause, "policy_failed");
  assert.equal(t.steps.length, 1);
  assert.equal(t.steps[0]!.reward, 2);
  assert.equal(t.totalReward, 2);
  await s.close();
});
