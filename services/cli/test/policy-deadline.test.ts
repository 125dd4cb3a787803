/**
 * The step's policy deadline follows the policy (issue 36, "The step's deadlines follow the policy"): a model server
 * that answers late is waited for when nothing shorter is set (the llm policy's own need: its request timeout ×
 * tries + backoff, beyond the old fixed 30 s), and a campaign's shorter deadline aborts the request in flight and
 * ends the episode with the deadline as its cause.
 *
 * `farm run` end to end with an answer after 4 s: waited for without a deadline set, cut by a 2 s one (both runs side
 * by side). The 40 s answer of issue 36 goes through the same race the episode runs (`policy.act` against the
 * deadline the episode derives from the policy) with the llm policy against the stand-in over real HTTP, on an
 * injected clock: at 30 s (the old fixed deadline) nothing has ended, at 40 s the answer is there.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, test } from "node:test";
import { startLlmStandIn, type LlmStandIn } from "@farm/local-services";
import { llmPolicy, type Observation, type PolicyDecision } from "@farm/policy";
import { orTimeout, pollUntil } from "@farm/time";
import { REPO, runFarm } from "./fixtures.ts";

const SLOW_MS = 4_000;
const OLD_FIXED_DEADLINE_MS = 30_000;
const complete = { action_type: "status", goal_status: "complete" };
const slowComplete = (ms = SLOW_MS) => [{ slowMs: ms, then: { json: complete } }];
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

test("a 4 s answer: the step succeeds under the llm policy's own deadline; a 2 s policy deadline aborts the request and names itself", async () => {
  const [slow, cut] = await Promise.all([
    runFarm(["run", task, "--episodes", "1", ...llmArgs(patient)], { timeoutMs: 180_000 }),
    runFarm(["run", task, "--episodes", "1", "--policy-timeout-ms", "2000", ...llmArgs(hasty)], { timeoutMs: 180_000 }),
  ]);
  assert.equal(slow.code, 0, slow.stderr);
  assert.match(slow.stdout, /^episode=0 steps=1 reward=\d+ outcome=terminated cause=agent_status/m, `${slow.stdout}\n${slow.stderr}`);
  assert.ok(slow.ms >= SLOW_MS, `the answer came after ${SLOW_MS} ms (run took ${Math.round(slow.ms)} ms)`);
  assert.equal(patient.served, 1);
  assert.equal(patient.abandoned, 0, "the patient run waited for its answer");

  assert.equal(cut.code, 0, cut.stderr);
  assert.match(cut.stdout, /^episode=0 steps=0 reward=0 outcome=truncated cause=policy_failed detail=".*2000 ms \(the policy deadline; the request was aborted\)"/m, `${cut.stdout}\n${cut.stderr}`);
  assert.equal(hasty.served, 1);
  // The stand-in notices the aborted request when its socket closes, which may come a moment after the run's end.
  assert.ok(await pollUntil(() => hasty.abandoned === 1, { timeoutMs: 5_000, intervalMs: 20 }), `the request in flight was aborted, not left running (abandoned ${hasty.abandoned})`);
});

test("a 40 s answer (injected clock): the llm policy's own deadline is past the old fixed 30 s and the answer is waited for", async (t) => {
  const standIn = await startLlmStandIn({ script: slowComplete(40_000) });
  const policy = llmPolicy({ endpoint: standIn.endpoint, model: "stand-in", screenshot: false });
  try {
    // What the episode's deadline becomes with nothing shorter set (episode-limits.ts: the policy's declared need).
    const deadline = policy.actDeadlineMs!;
    assert.ok(deadline > 40_000 && deadline > OLD_FIXED_DEADLINE_MS, `the llm policy declares ${deadline} ms`);
    await policy.reset({ seed: 1, episodeIndex: 0, screen: { width: 1080, height: 1920 }, goal: "Create a note titled milk" });
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const obs: Observation = { timedeltaUs: 0, orientation: 0, extras: {}, stepIndex: 0, screen: { width: 1080, height: 1920 }, goal: "Create a note titled milk", elements: [] };
    const race: { settled?: { timedOut: boolean; value?: PolicyDecision } } = {};
    // The race the episode runs (episode-run.ts chooseAction: withDeadline(policy.act(...), policyTimeoutMs)).
    void orTimeout(policy.act(obs).then((value) => ({ timedOut: false, value })), deadline, () => ({ timedOut: true })).then((r) => (race.settled = r));
    const realTurns = async (n: number) => {
      for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
    };
    // Real I/O runs on (setImmediate is not mocked) until the stand-in holds the request and waits on its timer.
    // Date is not mocked: the waits on real I/O are bounded in real time (generous for a busy machine).
    const until = async (done: () => boolean) => {
      const end = Date.now() + 60_000;
      while (!done() && Date.now() < end) await realTurns(1);
    };
    await until(() => standIn.served >= 1);
    assert.equal(standIn.served, 1, "the request reached the stand-in");
    await realTurns(50);
    t.mock.timers.tick(OLD_FIXED_DEADLINE_MS + 1);
    await realTurns(200);
    assert.equal(race.settled, undefined, "past the old fixed 30 s the step is still waiting");
    t.mock.timers.tick(40_000 - OLD_FIXED_DEADLINE_MS);
    await until(() => race.settled !== undefined);
    const settled = race.settled as { timedOut: boolean; value?: PolicyDecision } | undefined;
    assert.ok(settled, "the answer arrived");
    assert.equal(settled.timedOut, false, "the answer after 40 s came inside the deadline");
    assert.match(JSON.stringify(settled.value), /"goal_status":"complete"/, "the model's answer is the step's action");
    assert.equal(standIn.abandoned, 0);
  } finally {
    t.mock.timers.reset();
    await policy.close();
    await standIn.close();
  }
});

test("--policy-timeout-ms is checked like every other number", async () => {
  const r = await runFarm(["run", task, "--episodes", "1", "--policy-timeout-ms", "50", "--sim"]);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /policy-timeout-ms/);
});
