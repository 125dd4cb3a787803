/**
 * The step's policy deadline follows the policy (issue 36, "The step's deadlines follow the policy"): a model server
 * that answers after 40 s is waited for when nothing shorter is set (the llm policy's own need: its request timeout ×
 * tries + backoff, beyond the old fixed 30 s), and a campaign's shorter deadline aborts the request in flight and
 * ends the episode with the deadline as its cause. Both runs go side by side (one 40 s wait for the file).
 */
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, test } from "node:test";
import { startLlmStandIn, type LlmStandIn } from "@farm/local-services";
import { REPO, runFarm } from "./fixtures.ts";

const SLOW_MS = 40_000;
const slowComplete = () => [{ slowMs: SLOW_MS, then: { json: { action_type: "status", goal_status: "complete" } } }];
let patient: LlmStandIn;
let hasty: LlmStandIn;

before(async () => {
  patient = await startLlmStandIn({ script: slowComplete() });
  hasty = await startLlmStandIn({ script: slowComplete() });
});
after(async () => {
  await Promise.all([patient.close(), hasty.close()]);
});

const task = path.join(REPO, "tasks", "todo_create_note.textproto");
const llmArgs = (s: LlmStandIn) => ["--sim", "--settle-ms", "20", "--policy", "llm", "--llm-endpoint", s.endpoint, "--llm-model", "stand-in", "--llm-no-screenshot"];

test("a 40 s answer: the step succeeds under the llm policy's own deadline; a 3 s policy deadline aborts the request and names itself", async () => {
  const [slow, cut] = await Promise.all([
    runFarm(["run", task, "--episodes", "1", ...llmArgs(patient)], { timeoutMs: 180_000 }),
    runFarm(["run", task, "--episodes", "1", "--policy-timeout-ms", "3000", ...llmArgs(hasty)], { timeoutMs: 180_000 }),
  ]);
  assert.equal(slow.code, 0, slow.stderr);
  assert.match(slow.stdout, /^episode=0 steps=1 reward=\d+ outcome=terminated cause=agent_status/m, `${slow.stdout}\n${slow.stderr}`);
  assert.ok(slow.ms >= SLOW_MS, `the answer came after ${SLOW_MS} ms (run took ${Math.round(slow.ms)} ms)`);
  assert.equal(patient.abandoned, 0, "the patient run waited for its answer");

  assert.equal(cut.code, 0, cut.stderr);
  assert.match(cut.stdout, /^episode=0 steps=0 reward=0 outcome=truncated cause=policy_failed detail=".*3000 ms \(the policy deadline; the request was aborted\)"/m, `${cut.stdout}\n${cut.stderr}`);
  assert.ok(cut.ms < SLOW_MS, `the deadline ended the episode before the answer (${Math.round(cut.ms)} ms)`);
  assert.equal(hasty.served, 1);
  assert.equal(hasty.abandoned, 1, "the request in flight was aborted, not left running");
});

test("--policy-timeout-ms is checked like every other number", async () => {
  const r = await runFarm(["run", task, "--episodes", "1", "--policy-timeout-ms", "50", "--sim"]);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /policy-timeout-ms/);
});
