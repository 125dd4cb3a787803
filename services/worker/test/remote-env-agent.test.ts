/**
 * The GUI-agent side of a world's specs and steps without devices: the agent observations' specs and tensors,
 * and a Step's actions as the run's answer (a UI action, an invalid one recorded, both kinds refused).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { DataType, grpc, payloadName, tensor } from "@farm/dm-env-rpc";
import { loadTaskFile } from "@farm/task";
import { AGENT_OBS } from "../src/remote-env/agent-specs.ts";
import { EnvError } from "../src/remote-env/env-error.ts";
import { ACT, FIRST_EXTRA_ID, observationTensors, worldSpecs, type StepFacts } from "../src/remote-env/specs.ts";
import { answerOf } from "../src/remote-env/step-answer.ts";
import { TASK_FILE } from "./harness.ts";

const task = loadTaskFile(TASK_FILE).task;
const specs = worldSpecs(task, { height: 4, width: 2 });
const str = (v: string) => tensor(DataType.STRING, [v]);
const refused = (pattern: RegExp) => (e: unknown) => e instanceof EnvError && e.code === grpc.status.INVALID_ARGUMENT && pattern.test(e.message);
const element = { index: 0, class_name: "android.widget.Button", text: "NEW NOTE", content_description: "", hint_text: "", resource_id: "new", package_name: "p", bounds: [0, 0, 10, 10], is_clickable: true } as const;

test("specs: goal and last_action_outcome are string scalars, elements a variable string list, a11y_tree variable bytes, ui_action a string", () => {
  const o = specs.observations;
  assert.deepEqual([o[AGENT_OBS.goal], o[AGENT_OBS.elements], o[AGENT_OBS.a11y_tree], o[AGENT_OBS.last_action_outcome]].map((s) => [s!.name, s!.dtype, s!.shape]), [
    ["goal", DataType.STRING, []],
    ["elements", DataType.STRING, [-1]],
    ["a11y_tree", DataType.UINT8, [-1]],
    ["last_action_outcome", DataType.STRING, []],
  ]);
  assert.deepEqual([specs.actions[ACT.ui_action]!.name, specs.actions[ACT.ui_action]!.dtype, specs.actions[ACT.ui_action]!.shape], ["ui_action", DataType.STRING, []]);
  assert.equal(o[FIRST_EXTRA_ID]!.name, task.extrasSpec[0]!.name, "the task's extras keep their ids");
});

test("agent observations as tensors: the goal, one JSON object per element, the tree as bytes, the previous outcome", () => {
  const previous = { given: '{"action_type":"click","index":9}', invalid: "index 9 is out of range" };
  const facts: StepFacts = { obs: { timedeltaUs: 0, orientation: 0, extras: {}, stepIndex: 1, screen: { width: 2, height: 4 }, goal: "make a note", elements: [element as never], previous }, reward: 0, discount: 1, frame: { height: 4, width: 2 }, a11yTree: '{"v":1}' };
  const all = new Set(Object.values(AGENT_OBS));
  const out = observationTensors(task, facts, all);
  assert.deepEqual(out[AGENT_OBS.goal]!.strings!.array, ["make a note"]);
  const els = out[AGENT_OBS.elements]!;
  assert.deepEqual(els.shape, [1]);
  assert.deepEqual(JSON.parse(els.strings!.array[0]!), element);
  assert.equal(payloadName(out[AGENT_OBS.a11y_tree]!), "uint8s");
  assert.equal(Buffer.from(out[AGENT_OBS.a11y_tree]!.uint8s!.array).toString(), '{"v":1}');
  assert.deepEqual(JSON.parse(out[AGENT_OBS.last_action_outcome]!.strings!.array[0]!), previous);
  const bare = observationTensors(task, { ...facts, obs: { ...facts.obs, elements: undefined, previous: undefined, goal: undefined }, a11yTree: undefined }, all);
  assert.deepEqual([bare[AGENT_OBS.goal]!.strings!.array, bare[AGENT_OBS.elements]!.shape, bare[AGENT_OBS.a11y_tree]!.shape, bare[AGENT_OBS.last_action_outcome]!.strings!.array], [[""], [0], [0], [""]]);
});

test("a ui_action step answers the parsed UI action with the text as given", () => {
  const text = '{"action_type":"click","index":3}';
  assert.deepEqual(answerOf({ [ACT.ui_action]: str(text) }, specs.actions), { action: { action_type: "click", index: 3 }, given: text });
});

test("malformed or invalid ui_action text is an invalid answer (recorded by the run), not a refusal", () => {
  const bad = answerOf({ [ACT.ui_action]: str("click 3") }, specs.actions) as { invalid: string; given: string };
  assert.match(bad.invalid, /not JSON/);
  assert.equal(bad.given, "click 3");
  const unknown = answerOf({ [ACT.ui_action]: str('{"action_type":"fly"}') }, specs.actions) as { invalid: string };
  assert.match(unknown.invalid, /action_type must be one of/);
  const missing = answerOf({ [ACT.ui_action]: str('{"action_type":"input_text"}') }, specs.actions) as { invalid: string };
  assert.match(missing.invalid, /input_text needs text/);
});

test("touch fields and a ui_action in one step are refused, naming both; an empty ui_action counts as absent", () => {
  const touch = { [ACT.action_type]: tensor(DataType.INT32, [0]), [ACT.touch_position]: tensor(DataType.FLOAT, [0.5, 0.5], [2]) };
  assert.throws(() => answerOf({ ...touch, [ACT.ui_action]: str('{"action_type":"navigate_back"}') }, specs.actions), refused(/ui_action\) goes alone.*1 \(action_type\), 2 \(touch_position\)/));
  assert.deepEqual(answerOf({ ...touch, [ACT.ui_action]: str("") }, specs.actions), { actionType: "TOUCH", touchPosition: [0.5, 0.5] });
  assert.throws(() => answerOf({}, specs.actions), refused(/action_type\) is required, or action 3 \(ui_action\)/));
});

test("a ui_action of another dtype or shape, or too long, is refused naming the uid", () => {
  assert.throws(() => answerOf({ [ACT.ui_action]: tensor(DataType.INT32, [1]) }, specs.actions), refused(/action 3 \(ui_action\): expected dtype strings/));
  assert.throws(() => answerOf({ [ACT.ui_action]: tensor(DataType.STRING, ["{}", "{}"], [2]) }, specs.actions), refused(/action 3 \(ui_action\): one string/));
  assert.throws(() => answerOf({ [ACT.ui_action]: str("x".repeat(70_000)) }, specs.actions), refused(/longer than/));
});
