/** The `human` policy (issue 37): the operator's answer becomes a checked UI decision with the time and instruction; leaving ends it. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { humanPolicy, PolicyError, type OperatorChannel, type OperatorView } from "@farm/policy";

const obs = { timedeltaUs: 0, orientation: 0 as const, extras: {}, stepIndex: 2, screen: { width: 360, height: 640 }, goal: "Make a note" };

test("the operator's action is a UI decision with the operator's time and instruction; the name becomes human:<operator>", async () => {
  const seen: OperatorView[] = [];
  const answers = [
    { operator: "alice", action: { action_type: "click", x: 10, y: 20 }, instruction: "  open it  " },
    { operator: "alice", action: { action_type: "bogus" } },
  ];
  const channel: OperatorChannel = { ask: async (v) => (seen.push(v), answers.shift()!), close: async () => undefined };
  const p = humanPolicy({ channel, actDeadlineMs: 1000 });
  assert.equal(p.name, "human");
  assert.equal(p.needsElements, true);
  await p.reset({ seed: 1, episodeIndex: 0, screen: obs.screen, goal: "Make a note" });
  const a = await p.act(obs);
  assert.deepEqual(a.action, { action_type: "click", x: 10, y: 20 });
  assert.equal(a.instruction, "open it");
  assert.ok(typeof a.usage?.latencyMs === "number");
  assert.equal(p.name, "human:alice");
  assert.deepEqual(seen[0], { step: 2, goal: "Make a note", screen: { width: 360, height: 640 } });
  const b = await p.act(obs);
  assert.match(b.invalid ?? "", /action_type/, "a bad action is an invalid step, not a crash");
});

test("an operator who left rejects act with operator_abandoned", async () => {
  const channel: OperatorChannel = { ask: async () => Promise.reject(new PolicyError("operator_abandoned", "gone")), close: async () => undefined };
  const p = humanPolicy({ channel, actDeadlineMs: 1000 });
  await assert.rejects(p.act(obs), (e: unknown) => e instanceof PolicyError && e.code === "operator_abandoned");
});
