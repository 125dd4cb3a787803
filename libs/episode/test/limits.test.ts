import { test } from "node:test";
import assert from "node:assert/strict";
import { decideTransition, timeLimitSec } from "../src/limits.ts";
import { AppScreenMonitor, checkDue } from "../src/app-screen-monitor.ts";
import { effectiveLimits } from "../src/episode-limits.ts";

const facts = (o: Partial<Parameters<typeof decideTransition>[0]> = {}) => ({ episodeSteps: 1, elapsedMs: 0, appLeft: false, episodeEnd: false, ...o });

test("step limit: with max_episode_steps = N, steps 1..N are MID and step N+1 is LAST", () => {
  for (const n of [1, 2, 5, 100]) {
    for (let step = 1; step <= n; step++) assert.equal(decideTransition(facts({ episodeSteps: step }), { maxEpisodeSteps: n, maxEpisodeSec: 0 }).last, false, `N=${n} step=${step}`);
    assert.deepEqual(decideTransition(facts({ episodeSteps: n + 1 }), { maxEpisodeSteps: n, maxEpisodeSec: 0 }), { last: true, outcome: "truncated", cause: "step_limit" });
  }
  for (const off of [0, -1]) assert.equal(decideTransition(facts({ episodeSteps: 1e6 }), { maxEpisodeSteps: off, maxEpisodeSec: 0 }).last, false);
});

test("time limit: int(max_episode_sec), compared strictly; (0,1) ends at the first step; <= 0 disables", () => {
  const L = (sec: number) => ({ maxEpisodeSteps: 0, maxEpisodeSec: sec });
  assert.equal(decideTransition(facts({ elapsedMs: 2000 }), L(2)).last, false, "equal is not over");
  assert.deepEqual(decideTransition(facts({ elapsedMs: 2001 }), L(2)), { last: true, outcome: "truncated", cause: "time_limit" });
  assert.equal(decideTransition(facts({ elapsedMs: 2999 }), L(2.9)).last, true, "2.9 acts as 2");
  assert.equal(decideTransition(facts({ elapsedMs: 2000 }), L(2.9)).last, false);
  assert.equal(decideTransition(facts({ elapsedMs: 1 }), L(0.5)).last, true, "0.5 acts as 0");
  assert.equal(decideTransition(facts({ elapsedMs: 1e9 }), L(0)).last, false);
  assert.equal(decideTransition(facts({ elapsedMs: 1e9 }), L(-3)).last, false);
  assert.equal(timeLimitSec(300.9), 300);
  assert.equal(timeLimitSec(0), undefined);
});

test("decision order: app left, then episode end, then step limit, then time limit", () => {
  const all = { maxEpisodeSteps: 1, maxEpisodeSec: 1 };
  const over = { episodeSteps: 2, elapsedMs: 5000 };
  assert.equal((decideTransition(facts({ ...over, appLeft: true, episodeEnd: true }), all) as { cause: string }).cause, "app_left");
  assert.deepEqual(decideTransition(facts({ ...over, episodeEnd: true }), all), { last: true, outcome: "terminated", cause: "episode_end" });
  assert.equal((decideTransition(facts(over), all) as { cause: string }).cause, "step_limit");
  assert.equal((decideTransition(facts({ elapsedMs: 5000 }), all) as { cause: string }).cause, "time_limit");
  assert.deepEqual(decideTransition(facts({ episodeEnd: true }), { maxEpisodeSteps: 0, maxEpisodeSec: 0 }), { last: true, outcome: "terminated", cause: "episode_end" });
});

test("app-screen cadence: every K steps and/or every T ms since the last check (or the reset)", () => {
  const due = (steps: number[], c: { everySteps: number; everyMs: number }) => steps.filter((s) => checkDue(s, 0, 0, c));
  assert.deepEqual(due([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], { everySteps: 3, everyMs: 0 }), [3, 6, 9]);
  assert.deepEqual(due([1, 2, 3], { everySteps: 1, everyMs: 0 }), [1, 2, 3]);
  assert.deepEqual(due([1, 2, 3, 150], { everySteps: 0, everyMs: 0 }), []);
  assert.equal(checkDue(1, 999, 0, { everySteps: 0, everyMs: 1000 }), false);
  assert.equal(checkDue(1, 1000, 0, { everySteps: 0, everyMs: 1000 }), true);
  const m = new AppScreenMonitor({ activity: "a/a.B", viewHierarchyPath: [] }, { everySteps: 2, everyMs: 0 }, 10);
  m.resetEpisode(0);
  assert.equal(m.due(2, 0), true);
  assert.equal(new AppScreenMonitor(undefined, { everySteps: 1, everyMs: 0 }, 10).due(1, 0), false, "no expected screen, no check");
});

test("app-screen verdicts: unexpected activity/hierarchy = left; extraction failures only after N in a row", () => {
  const m = new AppScreenMonitor({ activity: "a/a.B", viewHierarchyPath: [] }, { everySteps: 1, everyMs: 0 }, 3);
  assert.equal(m.verdictOf("SUCCESS").left, false);
  assert.equal(m.verdictOf("EMPTY_EXPECTED_ACTIVITY").left, false);
  assert.equal(m.verdictOf("UNEXPECTED_ACTIVITY").left, true);
  assert.equal(m.verdictOf("UNEXPECTED_VIEW_HIERARCHY").left, true);
  assert.equal(m.verdictOf("FAILED_ACTIVITY_EXTRACTION").left, false);
  assert.equal(m.verdictOf("FAILED_ACTIVITY_EXTRACTION").left, false);
  assert.equal(m.verdictOf("SUCCESS").left, false, "a success resets the run");
  assert.equal(m.verdictOf("FAILED_ACTIVITY_EXTRACTION").left, false);
  assert.equal(m.verdictOf("FAILED_ACTIVITY_EXTRACTION").left, false);
  assert.equal(m.verdictOf("FAILED_ACTIVITY_EXTRACTION").left, true);
  assert.equal(m.verdictOf("FAILED_ACTIVITY_EXTRACTION").left, false, "counter restarts");
});

test("effectiveLimits: each override wins over the task's limit / the config's step deadline; bad values are refused", () => {
  const taskLimits = { maxEpisodeSteps: 100, maxEpisodeSec: 60 };
  const cfg = { stepTimeoutMs: 10_000, policyTimeoutMs: 0 };
  assert.deepEqual(effectiveLimits(taskLimits, cfg), { maxEpisodeSteps: 100, maxEpisodeSec: 60, stepTimeoutMs: 10_000, maxInvalidActions: 0, policyTimeoutMs: 30_000 });
  assert.deepEqual(effectiveLimits(taskLimits, cfg, { maxEpisodeSteps: 5 }), { maxEpisodeSteps: 5, maxEpisodeSec: 60, stepTimeoutMs: 10_000, maxInvalidActions: 0, policyTimeoutMs: 30_000 });
  assert.deepEqual(effectiveLimits(taskLimits, cfg, { maxEpisodeSec: 0, stepTimeoutMs: 500 }), { maxEpisodeSteps: 100, maxEpisodeSec: 0, stepTimeoutMs: 500, maxInvalidActions: 0, policyTimeoutMs: 30_000 });
  assert.equal(effectiveLimits(taskLimits, cfg, { maxInvalidActions: 3 }).maxInvalidActions, 3);
  // The override's boundary is the task's: N = 5 → step 5 MID, step 6 LAST.
  const l = effectiveLimits(taskLimits, cfg, { maxEpisodeSteps: 5 });
  assert.equal(decideTransition(facts({ episodeSteps: 5 }), l).last, false);
  assert.equal(decideTransition(facts({ episodeSteps: 6 }), l).last, true);
  assert.throws(() => effectiveLimits(taskLimits, cfg, { stepTimeoutMs: 0 }), RangeError);
  assert.throws(() => effectiveLimits(taskLimits, cfg, { maxEpisodeSteps: Number.NaN }), RangeError);
  assert.throws(() => effectiveLimits(taskLimits, cfg, { policyTimeoutMs: 0 }), RangeError);
});

test("the policy deadline: the episode's override, else the worker's setting, else what the policy declares, else 30 s", () => {
  const taskLimits = { maxEpisodeSteps: 100, maxEpisodeSec: 60 };
  const auto = { stepTimeoutMs: 10_000, policyTimeoutMs: 0 };
  const worker = { stepTimeoutMs: 10_000, policyTimeoutMs: 45_000 };
  const llm = { actDeadlineMs: 250_000 };
  assert.equal(effectiveLimits(taskLimits, auto, {}, {}).policyTimeoutMs, 30_000);
  assert.equal(effectiveLimits(taskLimits, auto, {}, llm).policyTimeoutMs, 250_000);
  assert.equal(effectiveLimits(taskLimits, worker, {}, llm).policyTimeoutMs, 45_000);
  assert.equal(effectiveLimits(taskLimits, worker, { policyTimeoutMs: 90_000 }, llm).policyTimeoutMs, 90_000);
  assert.equal(effectiveLimits(taskLimits, auto, {}, { actDeadlineMs: Number.NaN }).policyTimeoutMs, 30_000);
});
