/**
 * Observations as tensors (specs.ts): exactly the requested ones; an extra the app did not log this step
 * has its spec's default value (the dtype's zero at the spec's shape); a logged one keeps its value.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { numbers, payloadName } from "@farm/dm-env-rpc";
import { loadTaskFile } from "@farm/task";
import { defaultExtraTensor, FIRST_EXTRA_ID, OBS, observationTensors, type StepFacts } from "../src/remote-env/specs.ts";
import { TASK_FILE } from "./harness.ts";

const task = loadTaskFile(TASK_FILE).task;
const facts = (extras: StepFacts["obs"]["extras"]): StepFacts => ({ obs: { timedeltaUs: 5, orientation: 1, extras, stepIndex: 0, screen: { width: 1, height: 1 } } as never, reward: 2, discount: 1, frame: { height: 1, width: 1 } });
const gridId = FIRST_EXTRA_ID + task.extrasSpec.findIndex((e) => e.name === "grid");

test("no observation requested: none answered", () => {
  assert.deepEqual(observationTensors(task, facts({}), new Set()), {});
});

test("an extra not logged this step has its spec's default value: zeros at the spec's shape", () => {
  const out = observationTensors(task, facts({}), new Set([gridId, OBS.reward]));
  assert.deepEqual(Object.keys(out).map(Number).sort(), [OBS.reward, gridId].sort());
  const grid = out[gridId]!;
  assert.equal(payloadName(grid), "int32s");
  assert.deepEqual(grid.shape, [4, 4]);
  assert.deepEqual(numbers(grid, "grid"), new Array(16).fill(0));
});

test("a logged extra keeps its last value", () => {
  const value = [[2, 0, 0, 0], [0, 4, 0, 0], [0, 0, 8, 0], [0, 0, 0, 16]];
  const out = observationTensors(task, facts({ grid: [{ value: [[0]], shape: [1, 1] }, { value, shape: [4, 4] }] } as never), new Set([gridId]));
  assert.deepEqual(numbers(out[gridId]!, "grid"), value.flat());
});

test("defaults of strings and bools; a variable dimension is empty", () => {
  assert.deepEqual(defaultExtraTensor({ name: "s", dtype: "STRING", shape: [2] }).strings?.array, ["", ""]);
  assert.deepEqual(defaultExtraTensor({ name: "b", dtype: "BOOL", shape: [] }).bools?.array, [false]);
  const v = defaultExtraTensor({ name: "v", dtype: "INT32", shape: [-1, 3] });
  assert.deepEqual({ shape: v.shape, n: numbers(v, "v").length }, { shape: [0, 3], n: 0 });
  assert.equal(payloadName(defaultExtraTensor({ name: "f", dtype: "FLOAT", shape: [] })), "floats");
});
