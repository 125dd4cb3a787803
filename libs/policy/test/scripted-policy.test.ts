import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { scriptedPolicy, type Policy, type ScriptAction } from "../src/index.ts";
import { context, observation, rejectsWithPolicyError, useTempDir } from "./helpers.ts";

const tmp = useTempDir("policy-scripted-");
const file = tmp.file;

async function take(p: Policy<ScriptAction>, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const a = await p.act(observation(i));
    if ("action_type" in a) out.push(`ui:${JSON.stringify(a)}`);
    else out.push(a.actionType === "TOUCH" ? `T${a.touchPosition.join(",")}` : a.actionType);
  }
  return out;
}

const JSONL = [
  `{"actionType":"TOUCH","touchPosition":[0.1,0.2]}`,
  ``,
  `// a comment line`,
  `{"actionType":"LIFT"}`,
  `{"actionType":"REPEAT","touchPosition":[0,0]}`,
].join("\n");

test("JSONL: plays the list, then LIFT forever by default; reset restarts", async () => {
  const p = await scriptedPolicy(await file("a.jsonl", JSONL));
  await p.reset(context(1));
  assert.deepEqual(await take(p, 5), ["T0.1,0.2", "LIFT", "REPEAT", "LIFT", "LIFT"]);
  await p.reset(context(2));
  assert.deepEqual(await take(p, 1), ["T0.1,0.2"]);
  assert.equal(p.name, "scripted:a.jsonl");
  assert.match(p.version, /^[0-9a-f]{12}$/);
});

test("JSON array and object forms; atEnd loop from the option or the file", async () => {
  const arr = await file("b.json", `[{"actionType":"TOUCH","touchPosition":[1,1]},\n {"actionType":"LIFT"}]`);
  const looping = await scriptedPolicy(arr, { atEnd: "loop" });
  assert.deepEqual(await take(looping, 5), ["T1,1", "LIFT", "T1,1", "LIFT", "T1,1"]);
  const obj = await file("c.json", JSON.stringify({ atEnd: "loop", actions: [{ actionType: "TOUCH", touchPosition: [0, 0.5] }] }));
  assert.deepEqual(await take(await scriptedPolicy(obj), 3), ["T0,0.5", "T0,0.5", "T0,0.5"]);
  assert.deepEqual(await take(await scriptedPolicy(obj, { atEnd: "lift" }), 3), ["T0,0.5", "LIFT", "LIFT"]);
});

test("version follows the content", async () => {
  const a = await scriptedPolicy(await file("v1.jsonl", JSONL));
  const b = await scriptedPolicy(await file("v2.jsonl", JSONL));
  const c = await scriptedPolicy(await file("v3.jsonl", JSONL + "\n{\"actionType\":\"LIFT\"}"));
  assert.equal(a.version, b.version);
  assert.notEqual(a.version, c.version);
});

const rejects = (path: string, code: string, pattern: RegExp) => rejectsWithPolicyError(scriptedPolicy(path), code, pattern);

test("errors name file:line for JSONL and the index for JSON", async () => {
  const badPos = await file("bad-pos.jsonl", `{"actionType":"LIFT"}\n\n{"actionType":"TOUCH","touchPosition":[0.5,1.5]}\n`);
  await rejects(badPos, "bad_script", new RegExp(`${badPos.replace(/[.]/g, "\\.")}:3: touchPosition must be \\[x, y\\]`));
  const badJson = await file("bad-json.jsonl", `{"actionType":"LIFT"}\n{"actionType": TOUCH}\n`);
  await rejects(badJson, "bad_script", /bad-json\.jsonl:2: not valid JSON/);
  const badType = await file("bad-type.jsonl", `{"actionType":"KEYDOWN","touchPosition":[0,0]}`);
  await rejects(badType, "bad_script", /bad-type\.jsonl:1: actionType must be one of TOUCH, LIFT, REPEAT, got "KEYDOWN"/);
  const noPos = await file("no-pos.json", `[{"actionType":"LIFT"},{"actionType":"TOUCH"}]`);
  await rejects(noPos, "bad_script", /no-pos\.json: actions\[1\]: touchPosition/);
  const badEnd = await file("bad-end.json", `{"atEnd":"stop","actions":[]}`);
  await rejects(badEnd, "bad_script", /atEnd must be "loop" or "lift"/);
  await rejects(await file("empty.jsonl", "\n\n"), "bad_script", /holds no actions/);
  await rejects(join(tmp.dir, "missing.jsonl"), "bad_script", /cannot read .*missing\.jsonl/);
});

test("UI actions (AndroidWorld's JSON) mix with touches; needsElements only when a line points by index", async () => {
  const ui = await file("ui.jsonl", [`{"action_type":"open_app","app_name":"Todo"}`, `{"actionType":"TOUCH","touchPosition":[0.5,0.5]}`, `{"action_type":"click","index":3}`, `{"action_type":"status","goal_status":"complete"}`].join("\n"));
  const p = await scriptedPolicy(ui);
  assert.equal(p.needsElements, true);
  assert.deepEqual(await take(p, 5), [`ui:{"action_type":"open_app","app_name":"Todo"}`, "T0.5,0.5", `ui:{"action_type":"click","index":3}`, `ui:{"action_type":"status","goal_status":"complete"}`, "LIFT"]);
  await p.reset(context(1));
  const first = await p.act(observation(0));
  assert.ok("action_type" in first);
  first.app_name = "changed";
  await p.reset(context(1));
  assert.deepEqual(await p.act(observation(0)), { action_type: "open_app", app_name: "Todo" }, "a caller mutating an answer cannot change the script");
  const byPoint = await scriptedPolicy(await file("ui-xy.json", JSON.stringify([{ action_type: "click", x: 10, y: 20 }, { action_type: "input_text", text: "milk" }])));
  assert.equal(byPoint.needsElements, false);
});

test("a bad UI action line is refused at load, naming file:line and the rule", async () => {
  const badUi = await file("bad-ui.jsonl", `{"action_type":"click","x":1,"y":2}\n{"action_type":"scroll"}\n`);
  await rejects(badUi, "bad_script", /bad-ui\.jsonl:2: UI action: scroll needs a direction/);
  const badKey = await file("bad-key.json", `[{"action_type":"click","index":1,"colour":"red"}]`);
  await rejects(badKey, "bad_script", /bad-key\.json: actions\[0\]: UI action: unknown key 'colour'/);
});
