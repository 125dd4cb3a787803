/**
 * Bounded labels. Choice: out-of-set values are mapped to "other" (never thrown, so recording a
 * metric cannot break the code it observes), counted in farm_metric_label_overflow_total{metric,label},
 * and reported once per (metric, label) through onLabelOverflow so the caller can log it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createFarmMetrics, METRIC } from "../src/index.ts";
import { parseExposition, valueOf } from "./exposition.ts";

test("unknown outcome, cause, phase, status and code become \"other\" and are counted", async () => {
  const reported: string[] = [];
  const m = createFarmMetrics({ service: "t", collectDefault: false, onLabelOverflow: (o) => reported.push(`${o.metric}/${o.label}=${o.value}`) });
  m.episodeFinished({ taskId: "a", outcome: "exploded" as never, cause: "gremlins" as never, durationSec: 1, steps: 1, reward: 0 });
  m.episodeFinished({ taskId: "a", outcome: "exploded" as never, cause: "gremlins" as never, durationSec: 1, steps: 1, reward: 0 });
  m.stepPhase("think" as never, 0.1);
  m.adbCall({ op: "shell", status: "weird" as never, seconds: 0.1 });
  m.policyError("nope" as never);
  const exp = parseExposition(await m.metricsText());
  assert.equal(valueOf(exp, METRIC.episodes, { task: "a", outcome: "other", cause: "other" }), 2);
  assert.equal(valueOf(exp, `${METRIC.stepPhaseDuration}_count`, { phase: "other" }), 1);
  assert.equal(valueOf(exp, METRIC.adbErrors, { kind: "other" }), 1);
  assert.equal(valueOf(exp, METRIC.policyErrors, { code: "other" }), 1);
  assert.equal(valueOf(exp, METRIC.labelOverflow, { metric: METRIC.episodes, label: "outcome" }), 2);
  assert.equal(valueOf(exp, METRIC.labelOverflow, { metric: METRIC.episodes, label: "cause" }), 2);
  assert.deepEqual(reported.sort(), [
    `${METRIC.adbCalls}/status=weird`,
    `${METRIC.episodes}/cause=gremlins`,
    `${METRIC.episodes}/outcome=exploded`,
    `${METRIC.policyErrors}/code=nope`,
    `${METRIC.stepPhaseDuration}/phase=think`,
  ], "reported once per metric and label");
});

test("task ids are capped and must look like ids; series stay bounded", async () => {
  const m = createFarmMetrics({ service: "t", collectDefault: false, maxTasks: 3 });
  for (let i = 0; i < 1000; i++) {
    m.episodeFinished({ taskId: `task_${i % 50}`, outcome: "terminated", cause: "episode_end", durationSec: 1, steps: 1, reward: 1 });
  }
  m.episodeFinished({ taskId: "/tmp/some path.textproto", outcome: "terminated", cause: "episode_end", durationSec: 1, steps: 1, reward: 1 });
  m.jobsEnqueued("task_0"); // the cap is shared: a known task stays known on every metric
  m.jobsEnqueued("task_49");
  const exp = parseExposition(await m.metricsText());
  const tasks = new Set(exp.samples.filter((s) => s.name === METRIC.episodes).map((s) => s.labels.task));
  assert.deepEqual([...tasks].sort(), ["other", "task_0", "task_1", "task_2"]);
  assert.equal(valueOf(exp, METRIC.jobsEnqueued, { task: "task_0" }), 1);
  assert.equal(valueOf(exp, METRIC.jobsEnqueued, { task: "other" }), 1);
  assert.equal(valueOf(exp, METRIC.episodes, { task: "other" }), 1000 - 3 * 20 + 1);
});

test("open labels (adb op, device state, recovery cause, queue) are capped and validated", async () => {
  const m = createFarmMetrics({ service: "t", collectDefault: false });
  for (let i = 0; i < 100; i++) m.adbCall({ op: `op_${i}`, status: "ok", seconds: 0.001 });
  m.recovery("Relaunch Because Of X"); // not snake_case: a message, not a cause
  m.setDeviceStates({ "emulator-5554": 1 });
  m.setQueueDepthSource(async () => Array.from({ length: 40 }, (_, i) => ({ queue: `q${i}`, state: "waiting", count: 1 })));
  const exp = parseExposition(await m.metricsText());
  const ops = new Set(exp.samples.filter((s) => s.name === METRIC.adbCalls).map((s) => s.labels.op));
  assert.equal(ops.size, 41, "40 ops + other");
  assert.equal(valueOf(exp, METRIC.recoveries, { cause: "other" }), 1);
  assert.equal(valueOf(exp, METRIC.devices, { state: "other" }), 1);
  assert.equal(valueOf(exp, METRIC.queueJobs, { queue: "other", state: "waiting" }), 24, "16 queues kept; the other 24 add up");
});

test("invalid numbers are dropped and counted, never thrown", async () => {
  const m = createFarmMetrics({ service: "t", collectDefault: false });
  m.stepPhase("policy", Number.NaN);
  m.stepPhase("policy", -1);
  m.jobStarted(Number.POSITIVE_INFINITY);
  m.trajectoryWritten({ bytes: -5 });
  m.episodeFinished({ taskId: "a", outcome: "terminated", cause: "episode_end", durationSec: 2, steps: 3, reward: -7 });
  const exp = parseExposition(await m.metricsText());
  assert.equal(valueOf(exp, METRIC.invalidValues, { metric: METRIC.stepPhaseDuration }), 2);
  assert.equal(valueOf(exp, METRIC.invalidValues, { metric: METRIC.jobStartLatency }), 1);
  assert.equal(valueOf(exp, METRIC.invalidValues, { metric: METRIC.trajectoryBytes }), 1);
  assert.equal(valueOf(exp, METRIC.trajectoryFiles), 1, "the file still counts");
  assert.equal(valueOf(exp, `${METRIC.episodeReward}_sum`, { task: "a" }), -7, "negative rewards are valid");
});
