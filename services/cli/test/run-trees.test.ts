/**
 * `--trees` on `farm run` and `farm worker`: the run reads its trees from the simulated device's accessibility
 * forwarder (its summary counts reads by source); a bad value is refused before anything starts, naming the option.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { REPO, runFarm } from "./fixtures.ts";

const TASK = path.join(REPO, "tasks/todo_create_note.textproto");
const SOLUTION = path.join(REPO, "tasks/solutions/todo_create_note.ui.jsonl");

test("farm run --trees forwarder: the UI-action solution solves the task on trees from the forwarder", async () => {
  const r = await runFarm(["run", TASK, "--episodes", "1", "--policy", `scripted:${SOLUTION}`, "--sim", "--settle-ms", "20", "--trees", "forwarder"], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { reward_mean: number; steps: number; trees: { setting: string; reads: Record<string, number> } };
  assert.equal(summary.reward_mean, 1);
  assert.equal(summary.trees.setting, "forwarder");
  assert.ok((summary.trees.reads.forwarder ?? 0) >= summary.steps, JSON.stringify(summary));
  assert.equal(summary.trees.reads.uiautomator ?? 0, 0, JSON.stringify(summary));
});

for (const [command, args] of [
  ["run", ["run", TASK, "--sim", "--trees", "forwader"]],
  ["worker", ["worker", "--redis", "redis://127.0.0.1:1", "--trees", "forwader"]],
] as const) {
  test(`farm ${command} --trees with a bad value: a clear error naming the option and its choices`, async () => {
    const r = await runFarm([...args], { timeoutMs: 30_000 });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /trees \(FARM_TREES\) must be auto, uiautomator or forwarder, got 'forwader'/, r.stderr);
  });
}

test("FARM_TREES with a bad value is refused the same way", async () => {
  const r = await runFarm(["run", TASK, "--sim"], { timeoutMs: 30_000, env: { FARM_TREES: "all" } });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /trees \(FARM_TREES\) must be auto, uiautomator or forwarder, got 'all'/, r.stderr);
});
