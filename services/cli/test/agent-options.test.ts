/**
 * The agent flags of `farm submit` / `farm run` (issue 28): `--observe` and the every-N flags, `--max-invalid-actions`,
 * `--goal`, and goals files whose bad lines are refused naming file:line and the field.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadTaskFile } from "@farm/task";
import { agentRunOptions, goalsOf, observationOptions, readGoalsFile } from "../src/commands/agent-options.ts";

const REPO = path.resolve(import.meta.dirname, "../../..");
const FAMILY = loadTaskFile(path.join(REPO, "tasks/families/example_wifi.family.yaml"));
const PLAIN = loadTaskFile(path.join(REPO, "tasks/settings_turn_on_wifi.textproto"));

const dir = mkdtempSync(path.join(os.tmpdir(), "farm-goals-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const f = path.join(dir, name);
  writeFileSync(f, text);
  return f;
};

test("--observe sets what is recorded: each kind every step by default, a kind left out never", () => {
  assert.deepEqual(observationOptions({ observe: "pixels,a11y" }), { frameEvery: 1, a11yEvery: 1 });
  assert.deepEqual(observationOptions({ observe: "a11y" }), { frameEvery: 0, a11yEvery: 1 });
  assert.deepEqual(observationOptions({ observe: "pixels", frameEvery: "5" }), { frameEvery: 5, a11yEvery: 0 });
  assert.deepEqual(observationOptions({ observe: "a11y,pixels", a11yEvery: "3", maxInvalidActions: "4" }), { frameEvery: 1, a11yEvery: 3, maxInvalidActions: 4 });
  // Without --observe only what was given, as before.
  assert.deepEqual(observationOptions({}), {});
  assert.deepEqual(observationOptions({ a11yEvery: "2", frameEvery: "0" }), { frameEvery: 0, a11yEvery: 2 });
});

test("bad observation flags are refused naming the flag and the allowed values", () => {
  assert.throws(() => observationOptions({ observe: "pixels,screen" }), /--observe takes a comma-separated list of pixels, a11y \(each optional\), got 'screen'/);
  assert.throws(() => observationOptions({ observe: "" }), /--observe takes .* got ''/);
  assert.throws(() => observationOptions({ observe: "a11y", frameEvery: "2" }), /--frame-every 2 records pixels, but --observe 'a11y' leaves pixels out/);
  assert.throws(() => observationOptions({ observe: "pixels", a11yEvery: "1" }), /--a11y-every 1 records a11y, but --observe 'pixels' leaves a11y out/);
  assert.throws(() => observationOptions({ a11yEvery: "-1" }), /--a11y-every must be an integer in 0\.\./);
  assert.throws(() => observationOptions({ maxInvalidActions: "x" }), /--max-invalid-actions must be an integer/);
});

test("a goals file: one goal a line, blank lines skipped, episode i gets line i mod N", async () => {
  const f = file("ok.jsonl", `{"goal": "Create a note titled eggs", "game_config": {"title": "eggs"}}\n\n{"goal": "Look around"}\n`);
  const goals = await readGoalsFile(f);
  assert.deepEqual(goals, [{ goal: "Create a note titled eggs", gameConfig: { title: "eggs" } }, { goal: "Look around" }]);
  const run = await agentRunOptions({ goals: f, observe: "a11y", maxInvalidActions: "2" });
  assert.equal(run.gameConfigs, true);
  assert.deepEqual(run.forEpisode(2), { goal: "Create a note titled eggs", gameConfig: { title: "eggs" }, a11yEvery: 1, limits: { maxInvalidActions: 2 } });
  assert.deepEqual((await agentRunOptions({ goal: "Just this" })).forEpisode(5), { goal: "Just this" });
});

const badLines: [string, string, RegExp][] = [
  ["not JSON", `{"goal": "a"}\n{goal: b}\n`, /bad1\.jsonl:2: not JSON/],
  ["an array", `["a"]\n`, /bad2\.jsonl:1: a line is a JSON object/],
  ["no goal", `{"goal": "a"}\n\n{"game_config": {}}\n`, /bad3\.jsonl:3: field goal: missing/],
  ["an empty goal", `{"goal": ""}\n`, /bad4\.jsonl:1: field goal: must not be empty/],
  ["a goal that is a number", `{"goal": 7}\n`, /bad5\.jsonl:1: field goal: must be text/],
  ["a misspelt field", `{"goal": "a", "gameconfig": {}}\n`, /bad6\.jsonl:1: unknown field 'gameconfig'/],
  ["a game config that is text", `{"goal": "a", "game_config": "{}"}\n`, /bad7\.jsonl:1: field game_config: must be a JSON object/],
  ["a game config too large", `{"goal": "a", "game_config": {"t": "${"x".repeat(5000)}"}}\n`, /bad8\.jsonl:1: field game_config: at most 4096 characters/],
  ["a control character", `{"goal": "a\\u001b[2J"}\n`, /bad9\.jsonl:1: field goal: no control characters/],
  ["no lines", `\n\n`, /bad10\.jsonl: no goals/],
];

badLines.forEach(([what, text, message], i) => {
  test(`a goals file with ${what} is refused naming file:line and the field`, async () => {
    await assert.rejects(readGoalsFile(file(`bad${i + 1}.jsonl`, text), PLAIN), message);
  });
});

test("too many goals, a missing file, and --goal with --goals are refused", async () => {
  await assert.rejects(readGoalsFile(file("many.jsonl", `{"goal":"g"}\n`.repeat(10_001))), /many\.jsonl:10001: more than 10000 goals/);
  await assert.rejects(readGoalsFile(path.join(dir, "absent.jsonl")), /--goals .*absent\.jsonl: cannot read it/);
  await assert.rejects(goalsOf({ goal: "a", goals: "x.jsonl" }), /either --goal TEXT or --goals FILE\.jsonl, not both/);
  await assert.rejects(goalsOf({ goal: "" }), /--goal: must not be empty/);
});

test("a task family's goals file: params fixed per line, the goal then optional; episode i gets line i mod N", async () => {
  const f = file("family.jsonl", `{"params": {"state": "off"}}\n{"goal": "Wi-Fi on, please", "params": {"state": "on"}}\n{"goal": "Any state"}\n`);
  const goals = await readGoalsFile(f, FAMILY);
  assert.deepEqual(goals.map((g) => ({ ...g, ...(g.params ? { params: { ...g.params } } : {}) })), [{ params: { state: "off" } }, { goal: "Wi-Fi on, please", params: { state: "on" } }, { goal: "Any state" }]);
  assert.equal(Object.getPrototypeOf(goals[0]!.params), null);
  const run = await agentRunOptions({ goals: f }, FAMILY);
  assert.deepEqual({ ...run.paramsFor(4) }, { state: "on" });
  assert.equal(run.paramsFor(2), undefined);
  assert.deepEqual(run.forEpisode(3), {}); // line 0: params only (the family renders the goal)
  assert.deepEqual(run.forEpisode(1), { goal: "Wi-Fi on, please" });
  // Without the task (farm submit <task id>), lines are checked for their shape only; the scheduler checks the rest.
  assert.equal((await readGoalsFile(file("unknown-task.jsonl", `{"params": {"anything": 1}}\n`))).length, 1);
});

const badFamilyLines: [string, string, unknown, RegExp][] = [
  ["params that are a list", `{"params": ["on"]}\n`, FAMILY, /fbad1\.jsonl:1: field params: must be a JSON object/],
  ["a parameter the family lacks", `{"goal": "a"}\n{"params": {"mode": "on"}}\n`, FAMILY, /fbad2\.jsonl:2: field params: "mode" is not a parameter of this family \(its parameters: state, command, start_command, wifi_value\)/],
  ["a value outside the choices", `{"params": {"state": "maybe"}}\n`, FAMILY, /fbad3\.jsonl:1: field params: state: must be one of "on", "off"/],
  ["a nested value", `{"params": {"state": {"on": 1}}}\n`, undefined, /fbad4\.jsonl:1: field params: state: must be a string, a finite number or a boolean/],
  ["a bad name", `{"params": {"State": "on"}}\n`, undefined, /fbad5\.jsonl:1: field params: "State" is not a parameter name/],
  ["params for a task that is not a family", `{"goal": "a", "params": {"state": "on"}}\n`, PLAIN, /fbad6\.jsonl:1: field params: the task is not a task family/],
  ["an empty object", `{}\n`, FAMILY, /fbad7\.jsonl:1: an empty line object; give goal, game_config or params/],
];

badFamilyLines.forEach(([what, text, task, message], i) => {
  test(`a family's goals file with ${what} is refused naming file:line and field params, before anything is submitted`, async () => {
    await assert.rejects(readGoalsFile(file(`fbad${i + 1}.jsonl`, text), task as never), message);
  });
});

test("--observation-budget-mb N [--on-observation-budget stop|end]: the job's observationBudget, bounded; farm run gets bytes", async () => {
  assert.deepEqual(observationOptions({ observationBudgetMb: "64" }), { observationBudget: { maxMb: 64 } });
  assert.deepEqual(observationOptions({ observationBudgetMb: "64", onObservationBudget: "stop" }), { observationBudget: { maxMb: 64 } });
  assert.deepEqual(observationOptions({ observationBudgetMb: "8", onObservationBudget: "end" }), { observationBudget: { maxMb: 8, onExceeded: "end" } });
  assert.throws(() => observationOptions({ observationBudgetMb: "0" }), /observation-budget-mb/);
  assert.throws(() => observationOptions({ observationBudgetMb: "16385" }), /observation-budget-mb/);
  assert.throws(() => observationOptions({ observationBudgetMb: "8", onObservationBudget: "drop" }), /--on-observation-budget takes stop or end/);
  assert.throws(() => observationOptions({ onObservationBudget: "end" }), /goes with --observation-budget-mb/);
  const run = await agentRunOptions({ observationBudgetMb: "2", onObservationBudget: "end" });
  assert.deepEqual(run.forEpisode(0).limits, { observationBudget: { maxBytes: 2 * 1024 * 1024, onExceeded: "end" } });
  const { episodeOptionsSchema } = await import("@farm/queue");
  assert.ok(episodeOptionsSchema.safeParse({ observationBudget: { maxMb: 64, onExceeded: "end" } }).success);
  assert.ok(!episodeOptionsSchema.safeParse({ observationBudget: { maxMb: 0 } }).success);
  assert.ok(!episodeOptionsSchema.safeParse({ observationBudget: { maxMb: 64, onExceeded: "drop" } }).success);
});

test("--max-staleness V [--on-stale mark|end]: the job's staleness (issue 38), bounded; farm run gets it per episode", async () => {
  assert.deepEqual(observationOptions({ maxStaleness: "2" }), { staleness: { maxVersions: 2 } });
  assert.deepEqual(observationOptions({ maxStaleness: "0", onStale: "mark" }), { staleness: { maxVersions: 0 } });
  assert.deepEqual(observationOptions({ maxStaleness: "1", onStale: "end" }), { staleness: { maxVersions: 1, onStale: "end" } });
  assert.throws(() => observationOptions({ maxStaleness: "-1" }), /max-staleness/);
  assert.throws(() => observationOptions({ maxStaleness: "1", onStale: "drop" }), /--on-stale takes mark or end/);
  assert.throws(() => observationOptions({ onStale: "end" }), /goes with --max-staleness/);
  const run = await agentRunOptions({ maxStaleness: "3", onStale: "end" });
  assert.deepEqual(run.forEpisode(0).staleness, { maxVersions: 3, onStale: "end" });
  const { episodeOptionsSchema } = await import("@farm/queue");
  assert.ok(episodeOptionsSchema.safeParse({ staleness: { maxVersions: 2, onStale: "end" } }).success);
  assert.ok(!episodeOptionsSchema.safeParse({ staleness: { maxVersions: -1 } }).success);
  assert.ok(!episodeOptionsSchema.safeParse({ staleness: { maxVersions: 1, onStale: "drop" } }).success);
});
