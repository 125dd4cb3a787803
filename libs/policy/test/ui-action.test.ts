import assert from "node:assert/strict";
import { test } from "node:test";
import { parseUiAction, readAnswer, GIVEN_MAX_CHARS } from "../src/index.ts";
import { parseAnswer, UI_TEXT_MAX_CHARS } from "@farm/policy/testing";

test("parseUiAction accepts each AndroidWorld action type with the fields it needs", () => {
  const good = [
    { action_type: "click", index: 7 },
    { action_type: "click", x: 100, y: 200 },
    { action_type: "double_tap", index: 0 },
    { action_type: "long_press", x: 1, y: 2 },
    { action_type: "input_text", text: "milk", index: 3, clear_text: true },
    { action_type: "keyboard_enter" },
    { action_type: "navigate_home" },
    { action_type: "navigate_back" },
    { action_type: "scroll", direction: "down" },
    { action_type: "scroll", direction: "left", index: 4 },
    { action_type: "swipe", direction: "up" },
    { action_type: "open_app", app_name: "Sim Settings" },
    { action_type: "wait" },
    { action_type: "status", goal_status: "complete" },
    { action_type: "status", goal_status: "infeasible" },
    { action_type: "answer", text: "42" },
  ];
  for (const g of good) assert.deepEqual(parseUiAction(g), g, JSON.stringify(g));
  // null fields are what a JSON encoder of a dataclass writes for absent ones
  assert.deepEqual(parseUiAction({ action_type: "click", index: 2, x: null, y: null, text: null }), { action_type: "click", index: 2 });
});

test("parseUiAction says why an action is invalid, never throws", () => {
  const bad: [unknown, RegExp][] = [
    [{ action_type: "fly" }, /action_type must be one of/],
    [{ action_type: "unknown" }, /unknown/],
    [{ action_type: "click" }, /needs an index or both x and y/],
    [{ action_type: "click", x: 5 }, /needs an index or both x and y/],
    [{ action_type: "click", index: -1 }, /whole number/],
    [{ action_type: "click", index: 1.5 }, /whole number/],
    [{ action_type: "click", index: "3" }, /whole number/],
    [{ action_type: "input_text" }, /needs text/],
    [{ action_type: "input_text", text: "x".repeat(UI_TEXT_MAX_CHARS + 1) }, /longer than/],
    [{ action_type: "scroll", direction: "sideways" }, /direction must be one of/],
    [{ action_type: "open_app", app_name: "  " }, /needs app_name/],
    [{ action_type: "status" }, /goal_status/],
    [{ action_type: "status", goal_status: "done" }, /goal_status must be one of/],
    [{ action_type: "wait", __proto__x: 1 }, /unknown key/],
    [{ action_type: "click", index: 1, clear_text: "yes" }, /clear_text/],
    [[], /not a JSON object/],
  ];
  for (const [v, re] of bad) {
    const r = parseUiAction(v);
    assert.ok("invalid" in r, JSON.stringify(v));
    assert.match(r.invalid, re);
  }
});

test("readAnswer: touches as before, UI actions valid or invalid, decisions unwrapped with their usage", () => {
  assert.deepEqual(readAnswer({ actionType: "TOUCH", touchPosition: [0.5, 0.5] }), { kind: "touch", action: { actionType: "TOUCH", touchPosition: [0.5, 0.5] }, given: '{"actionType":"TOUCH","touchPosition":[0.5,0.5]}' });
  assert.throws(() => readAnswer({ actionType: "TOUCH", touchPosition: [2, 0] }), /touchPosition/);
  assert.throws(() => readAnswer("click 7"), /expected an object/);
  const ui = readAnswer({ action_type: "click", index: 7 });
  assert.equal(ui.kind, "ui");
  assert.equal(ui.given, '{"action_type":"click","index":7}');
  const inv = readAnswer({ action_type: "click" });
  assert.equal(inv.kind, "invalid");
  const d = readAnswer({ action: { action_type: "answer", text: "yes" }, given: "```json\n{...}\n```", usage: { promptTokens: 120, completionTokens: 9, latencyMs: 51.5, bogus: 3 } });
  assert.equal(d.kind, "ui");
  assert.equal(d.given, "```json\n{...}\n```");
  assert.deepEqual(d.usage, { promptTokens: 120, completionTokens: 9, latencyMs: 51.5 });
  const none = readAnswer({ invalid: "the model answered prose", given: "I think I should tap" });
  assert.deepEqual(none, { kind: "invalid", reason: "the model answered prose", given: "I think I should tap" });
  assert.equal(readAnswer({ invalid: "x", given: "y".repeat(GIVEN_MAX_CHARS * 2) }).given.length, GIVEN_MAX_CHARS);
});

test("parseAnswer returns fresh values: bare stays bare, decisions stay decisions, malformed touches throw", () => {
  const raw = { action_type: "click", index: 1 };
  const p = parseAnswer(raw);
  assert.deepEqual(p, raw);
  assert.notEqual(p, raw);
  assert.deepEqual(parseAnswer({ action_type: "click" }), { invalid: "click needs an index or both x and y", given: '{"action_type":"click"}' });
  assert.deepEqual(parseAnswer({ actionType: "LIFT" }), { actionType: "LIFT", touchPosition: [0, 0] });
  assert.throws(() => parseAnswer({ actionType: "JUMP" }), /actionType/);
});
