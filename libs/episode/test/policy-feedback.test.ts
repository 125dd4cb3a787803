/**
 * What a learning policy is told (policy-feedback.ts): FIRST/MID step types with the previous step's reward and
 * discount on each observation, and endEpisode once with the LAST reward, the discount (0 terminated, 1
 * truncated) and the return equal to the trajectory's. On @farm/adb's FakeDevice (fast, no simulator).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { FakeDevice, type FakeApp } from "@farm/adb";
import { lift, touch, type EpisodeEndInfo, type Observation, type Policy } from "@farm/policy";
import { DeviceSession, type EpisodeConfig } from "../src/index.ts";
import { APP, task } from "./fixtures.ts";

const FAST: EpisodeConfig = { settleMs: 0, stepTimeoutMs: 2000, resetTimeoutMs: 10_000, adbCallTimeoutMs: 2000, recoveryBackoffMs: 10, recoveryWaitMs: 200, appScreenCheckEverySteps: 0, finalLogDrainMs: 20 };

/** `reward: <n>` on the n-th touch; `episode end` after `endAfter` touches (if given). */
function game(endAfter?: number): FakeApp {
  let touches = 0;
  return {
    onStart: () => {
      touches = 0;
    },
    onTouch: (app) => {
      touches++;
      app.log(`reward: ${touches}`);
      if (endAfter !== undefined && touches >= endAfter) app.log("episode end");
    },
  };
}

function learner(): Policy & { seen: Pick<Observation, "stepType" | "reward" | "discount">[]; ends: EpisodeEndInfo[] } {
  let i = 0;
  const seen: Pick<Observation, "stepType" | "reward" | "discount">[] = [];
  const ends: EpisodeEndInfo[] = [];
  return {
    name: "learner",
    version: "1",
    needsPixels: false,
    seen,
    ends,
    async reset() {
      i = 0;
    },
    async act(o) {
      seen.push({ stepType: o.stepType, reward: o.reward, discount: o.discount });
      return i++ % 2 === 0 ? touch(0.5, 0.5) : lift();
    },
    async endEpisode(end) {
      ends.push(end);
    },
    async close() {},
  };
}

async function session(endAfter: number | undefined, maxEpisodeSteps: number): Promise<DeviceSession> {
  const dev = new FakeDevice({ apps: { [APP.twozero.pkg]: game(endAfter) } });
  const s = await DeviceSession.open({ device: dev, task: task({ id: "fake-2048", app: "twozero", maxEpisodeSteps }), config: FAST });
  assert.equal(s.state, "ready", s.unusableReason);
  return s;
}

test("terminated: FIRST then MID with each step's reward; the end has the last reward, discount 0 and the return", async () => {
  const s = await session(2, 100);
  const p = learner();
  const t = await s.runEpisode({ seed: 1, index: 0, policy: p });
  assert.equal(t.outcome, "terminated");
  assert.deepEqual(t.steps.map((x) => x.reward), [1, 0, 2]);
  assert.deepEqual(p.seen, [
    { stepType: "FIRST", reward: 0, discount: 1 },
    { stepType: "MID", reward: 1, discount: 1 },
    { stepType: "MID", reward: 0, discount: 1 },
  ]);
  assert.deepEqual(p.ends, [{ reward: 2, discount: 0, episodeReturn: 3, steps: 3, outcome: "terminated", cause: "episode_end" }]);
  await s.close();
});

test("truncated by the step limit: discount 1 at the end; each episode is told once", async () => {
  const s = await session(undefined, 2);
  const p = learner();
  const t = await s.runEpisode({ seed: 1, index: 0, policy: p });
  assert.equal(t.cause, "step_limit");
  assert.equal(p.ends.length, 1);
  assert.equal(p.ends[0]!.discount, 1);
  assert.equal(p.ends[0]!.episodeReturn, t.totalReward);
  await s.runEpisode({ seed: 2, index: 1, policy: p });
  assert.equal(p.ends.length, 2);
  assert.equal(p.seen.filter((x) => x.stepType === "FIRST").length, 2);
  await s.close();
});

test("an endEpisode that throws does not change the recorded episode", async () => {
  const s = await session(1, 100);
  const p = learner();
  p.endEpisode = async () => {
    throw new Error("learner crashed");
  };
  const t = await s.runEpisode({ seed: 1, index: 0, policy: p });
  assert.equal(t.outcome, "terminated");
  assert.equal(t.totalReward, 1);
  await s.close();
});
