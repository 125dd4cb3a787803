/**
 * The Python package (clients/python) against a real farm: Debian's /usr/bin/python3 runs the campaign
 * client (`python3 -m farm_client`) and the reference policy server, the farm runs Classic 2048 on
 * simulated emulators with the policy in batched (`http-batch:`) and single (`http:`) mode. Checked: the
 * campaigns finish, the server saw every step and was told every episode's end with a return that matches
 * the committed episodes' rewards, batching put several devices' steps in one request, and cancel works.
 * Plus the package's own unit tests (`python3 -m unittest`).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { PYTHON, PYTHON_CLIENT_DIR, startPolicyFarm, type PolicyFarm } from "../src/policy-farm.ts";

const run = promisify(execFile);
let farm: PolicyFarm;

before(async () => {
  farm = await startPolicyFarm({ devices: 3, batchWindowMs: 20 });
});
after(async () => {
  await farm?.close();
});

async function py(...args: string[]): Promise<unknown> {
  const { stdout } = await run(PYTHON, ["-m", "farm_client", "--url", farm.schedulerUrl, ...args], { cwd: PYTHON_CLIENT_DIR, timeout: 240_000 });
  return JSON.parse(stdout.trim().split("\n").pop()!);
}

interface FinalStatus {
  state: string;
  completed: number;
  failed: number;
  summary: { totalSteps: number; meanReward: number | null };
}

test("python unit tests of the package", async () => {
  const { stderr } = await run(PYTHON, ["-m", "unittest", "discover", "-s", "tests", "-v"], { cwd: PYTHON_CLIENT_DIR, timeout: 60_000 });
  assert.match(stderr, /\nOK\n?$/);
});

for (const mode of ["batched", "single"] as const) {
  test(`a campaign with the Python policy server (${mode}): every step asked, every end told, returns match`, async () => {
    const before = await farm.policyServer.stats();
    const episodes = 6;
    const policy = mode === "batched" ? `http-batch:${farm.policyServer.url}/batch` : `http:${farm.policyServer.url}/act`;
    const final = (await py("submit", farm.taskId, "--episodes", String(episodes), "--policy", policy, "--max-steps", "30", "--seed", mode === "batched" ? "1" : "2", "--wait")) as FinalStatus;
    assert.equal(final.state, "completed", JSON.stringify(final));
    assert.equal(final.completed, episodes, JSON.stringify(final));
    const after = await farm.policyServer.stats();
    const steps = after.stepItems - before.stepItems;
    assert.equal(steps, final.summary.totalSteps, "one policy step per episode step");
    assert.equal(after.episodeEnds - before.episodeEnds, episodes, "every episode's end was told");
    const returns = after.returns.slice(before.returns.length);
    const sum = returns.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - final.summary.meanReward! * episodes) < 1e-6, `returns ${sum} vs committed ${final.summary.meanReward! * episodes}`);
    assert.ok(sum > 0, "the random taps merged some tiles (Classic 2048 logs the merge score as reward)");
    const requests = after.requests - before.requests;
    if (mode === "single") assert.equal(requests, steps + episodes, "one request per step and per episode end");
    else {
      assert.equal(after.batchRequests - before.batchRequests, requests);
      assert.ok(requests < steps, `batched: ${requests} requests for ${steps} steps`);
    }
  });
}

test("python client: status, list and cancel", async () => {
  const submitted = (await py("submit", farm.taskId, "--episodes", "500", "--id", "py-cancel", "--max-steps", "5")) as { created: boolean; campaign: { id: string } };
  assert.equal(submitted.created, true);
  const st = (await py("status", "py-cancel")) as { id: string; episodes: number };
  assert.equal(st.episodes, 500);
  const list = (await py("list")) as { id: string }[];
  assert.ok(list.some((c) => c.id === "py-cancel"));
  const cancelled = (await py("cancel", "py-cancel")) as { state: string };
  assert.equal(cancelled.state, "cancelled");
  await assert.rejects(run(PYTHON, ["-m", "farm_client", "--url", farm.schedulerUrl, "status", "no-such-campaign"], { cwd: PYTHON_CLIENT_DIR }), (e: { stderr: string; code: number }) => {
    assert.equal(e.code, 2);
    assert.match(e.stderr, /HTTP 404/);
    return true;
  });
});
