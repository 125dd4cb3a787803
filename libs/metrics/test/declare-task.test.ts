/**
 * declareTask: a task's counter series exist at 0 before its first episode, so rate()/increase() count
 * that episode (they miss the first increase of a series that appears already holding it).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { DEVICE_TROUBLE } from "@farm/episode";
import { createFarmMetrics, METRIC } from "../src/index.ts";
import { DECLARED_EPISODE_ENDS } from "@farm/metrics/testing";
import { parseExposition, valueOf, type Exposition } from "./exposition.ts";

const taskSeries = (exp: Exposition, name: string) => exp.samples.filter((s) => s.name === name);

test("declareTask creates the task's steps, extras and common episode series at 0", async () => {
  const m = createFarmMetrics({ service: "worker", collectDefault: false });
  m.declareTask("classic_2048");
  const exp = parseExposition(await m.metricsText());
  assert.equal(valueOf(exp, METRIC.steps, { task: "classic_2048" }), 0);
  assert.equal(valueOf(exp, METRIC.extrasDropped, { task: "classic_2048" }), 0);
  for (const [outcome, cause] of DECLARED_EPISODE_ENDS) {
    assert.equal(valueOf(exp, METRIC.episodes, { task: "classic_2048", outcome, cause }), 0, `${outcome}/${cause}`);
  }
  const episodes = taskSeries(exp, METRIC.episodes);
  assert.equal(episodes.length, DECLARED_EPISODE_ENDS.length, "only the declared pairs, not every combination");
  assert.ok(episodes.every((s) => s.labels.service === "worker"));
  assert.equal(valueOf(exp, METRIC.episodes, { task: "classic_2048", outcome: "truncated", cause: "cancelled" }), undefined);
  assert.equal(valueOf(exp, `${METRIC.episodeSteps}_count`, { task: "classic_2048" }), undefined, "histograms are not declared");
  assert.equal(valueOf(exp, METRIC.labelOverflow), undefined);

  // A recorded episode then counts on top of the zero series.
  m.episodeFinished({ taskId: "classic_2048", outcome: "terminated", cause: "episode_end", durationSec: 3, steps: 7, reward: 1 });
  const after = parseExposition(await m.metricsText());
  assert.equal(valueOf(after, METRIC.episodes, { task: "classic_2048", outcome: "terminated", cause: "episode_end" }), 1);
  assert.equal(valueOf(after, METRIC.steps, { task: "classic_2048" }), 7);
  assert.equal(taskSeries(after, METRIC.episodes).length, DECLARED_EPISODE_ENDS.length);
});

test("the declared pairs are the common ends plus exactly the device-trouble causes the worker retries", () => {
  const trouble = DECLARED_EPISODE_ENDS.filter(([, c]) => DEVICE_TROUBLE.has(c)).map(([, c]) => c);
  assert.deepEqual(new Set(trouble), new Set(DEVICE_TROUBLE));
  assert.ok(DECLARED_EPISODE_ENDS.every(([o, c]) => (c === "episode_end") === (o === "terminated")), "only pairs that occur");
  assert.equal(new Set(DECLARED_EPISODE_ENDS.map(([o, c]) => `${o}/${c}`)).size, DECLARED_EPISODE_ENDS.length);
});

test("declareTask is idempotent and does not reset recorded counts", async () => {
  const m = createFarmMetrics({ service: "t", collectDefault: false });
  m.declareTask("a");
  const once = await m.metricsText();
  m.declareTask("a");
  assert.equal(await m.metricsText(), once, "a second call changes nothing");
  m.episodeFinished({ taskId: "a", outcome: "truncated", cause: "step_limit", durationSec: 1, steps: 5, reward: 0 });
  m.extraDropped("a", 2);
  m.declareTask("a");
  const exp = parseExposition(await m.metricsText());
  assert.equal(valueOf(exp, METRIC.episodes, { task: "a", outcome: "truncated", cause: "step_limit" }), 1);
  assert.equal(valueOf(exp, METRIC.steps, { task: "a" }), 5);
  assert.equal(valueOf(exp, METRIC.extrasDropped, { task: "a" }), 2);
});

test("declareTask respects the task cap: past it, the \"other\" series, and no overflow counted", async () => {
  const reported: string[] = [];
  const m = createFarmMetrics({ service: "t", collectDefault: false, maxTasks: 2, onLabelOverflow: (o) => reported.push(o.value) });
  for (const id of ["a", "b", "c", "d", "/not an id"]) m.declareTask(id);
  m.declareTask("c");
  const exp = parseExposition(await m.metricsText());
  assert.deepEqual(new Set(taskSeries(exp, METRIC.episodes).map((s) => s.labels.task)), new Set(["a", "b", "other"]));
  assert.deepEqual(new Set(taskSeries(exp, METRIC.steps).map((s) => s.labels.task)), new Set(["a", "b", "other"]));
  assert.equal(taskSeries(exp, METRIC.episodes).length, 3 * DECLARED_EPISODE_ENDS.length);
  assert.equal(valueOf(exp, METRIC.steps, { task: "other" }), 0);
  assert.equal(valueOf(exp, METRIC.labelOverflow), undefined, "declaring records nothing, so nothing overflows");
  assert.deepEqual(reported, []);

  // The declared tasks took the cap's slots: recording keeps them, and a later task is "other" (reported as today).
  m.episodeFinished({ taskId: "b", outcome: "terminated", cause: "episode_end", durationSec: 1, steps: 1, reward: 0 });
  m.episodeFinished({ taskId: "c", outcome: "terminated", cause: "episode_end", durationSec: 1, steps: 1, reward: 0 });
  const after = parseExposition(await m.metricsText());
  assert.equal(valueOf(after, METRIC.episodes, { task: "b", outcome: "terminated", cause: "episode_end" }), 1);
  assert.equal(valueOf(after, METRIC.episodes, { task: "other", outcome: "terminated", cause: "episode_end" }), 1);
  assert.equal(valueOf(after, METRIC.labelOverflow, { metric: METRIC.episodes, label: "task" }), 1);
  assert.deepEqual(reported, ["c"]);
});
