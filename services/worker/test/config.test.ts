/** The worker's config from the environment: FARM_TASKS as for the scheduler; the old FARM_TASK_DIRS still read, with a warning. */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { resolveWorkerConfig } from "../src/index.ts";

test("FARM_TASKS gives the task paths; FARM_TASK_DIRS still works once with a deprecation warning; FARM_TASKS wins", async () => {
  assert.deepEqual(resolveWorkerConfig({}, { FARM_TASKS: "a, b" }).taskPaths, [path.resolve("a"), path.resolve("b")]);
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on("warning", onWarning);
  try {
    assert.deepEqual(resolveWorkerConfig({}, { FARM_TASK_DIRS: "old" }).taskPaths, [path.resolve("old")]);
    assert.deepEqual(resolveWorkerConfig({}, { FARM_TASKS: "new", FARM_TASK_DIRS: "old" }).taskPaths, [path.resolve("new")]);
    await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
  } finally {
    process.off("warning", onWarning);
  }
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!.message, /FARM_TASK_DIRS is deprecated; set FARM_TASKS/);
  assert.deepEqual(resolveWorkerConfig({}, {}).taskPaths, [path.resolve("tasks")]);
});
