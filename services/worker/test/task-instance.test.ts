/** The worker's task instance per episode (issue 41): which tasks get one, the job's fixed parameters, how a committed score counts. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { LoadedTask, TaskFamily } from "@farm/task";
import { jobParams, scoreOutcome, taskInstanceFor } from "../src/task-instance.ts";

const task = (family?: TaskFamily): LoadedTask =>
  ({ task: { id: "t", description: "The task's description" }, hash: "h", dialect: "current", sourcePath: "/t.textproto", warnings: [], ...(family ? { family } : {}) }) as unknown as LoadedTask;
const family = (over: Partial<TaskFamily> = {}): TaskFamily => ({ id: "f", sourcePath: "/f.family.yaml", taskPath: "/t.textproto", params: [], setup: [], ...over });

test("taskInstanceFor: none for a plain task or a family without anything to do; one for a family with params or checks, and one over the task protocol for a family naming a task server", async () => {
  const key = { index: 0, seed: 1 };
  assert.equal(taskInstanceFor(task(), key), undefined);
  assert.equal(taskInstanceFor(task(family()), key), undefined);
  const remote = taskInstanceFor(task(family({ taskServer: { url: "http://127.0.0.1:1", className: "X", timeoutSec: 1 } })), key);
  assert.ok(remote, "a task server's family gets a remote instance");
  // Nothing listens on port 1: its initialize rejects with an error that names the task server, and it closes cleanly.
  await assert.rejects(remote.initialize({} as never, new AbortController().signal), /task server|127\.0\.0\.1:1/);
  await remote.close();
  const inst = taskInstanceFor(task(family({ params: [{ name: "n", spec: { kind: "const", value: 3 }, line: 2 }] })), key)!;
  const init = await inst.initialize({} as never, new AbortController().signal);
  assert.deepEqual([init.goal, { ...init.params }], ["The task's description", { n: 3 }]);
  const fixed = taskInstanceFor(task(family({ params: [{ name: "n", spec: { kind: "const", value: 3 }, line: 2 }] })), { ...key, fixedParams: { n: 9 }, goal: "Given" })!;
  const init2 = await fixed.initialize({} as never, new AbortController().signal);
  assert.deepEqual([init2.goal, { ...init2.params }], ["Given", { n: 9 }]);
});

test("jobParams: an object only; scoreOutcome: success, failure, error with the scoring time, none without a score", () => {
  assert.deepEqual(jobParams({ params: { a: 1 } }), { a: 1 });
  for (const bad of [{}, { params: null }, { params: [1] }, { params: "x" }]) assert.equal(jobParams(bad), undefined);
  assert.deepEqual(scoreOutcome({ success: 1, counters: { instance_score_ms: 250 } }), { result: "success", seconds: 0.25 });
  assert.deepEqual(scoreOutcome({ success: 0.5, counters: {} }), { result: "failure" });
  assert.deepEqual(scoreOutcome({ scoreError: "db: no database", counters: { instance_score_ms: 10 } }), { result: "error", seconds: 0.01 });
  assert.equal(scoreOutcome({ counters: {} }), undefined);
});
