/**
 * The toolkit apps' tasks (tasks/todo_*, tasks/settings_*) through `farm run --sim`: the scripted
 * solutions in tasks/solutions/ (fixed touches on the 360x640 screen) solve each; the seeded random
 * policy does not (its episodes run to the step limit). The APKs are found as the tasks name them
 * (apks/ beside the task file), without --apk-dir.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { REPO, runFarm } from "./fixtures.ts";

const TASKS = ["todo_create_note", "todo_check_item", "settings_turn_on_wifi", "settings_font_size_large"] as const;

function farmRun(task: string, policy: string, episodes: number) {
  return runFarm(["run", path.join(REPO, "tasks", `${task}.textproto`), "--episodes", String(episodes), "--policy", policy, "--seed", "7", "--sim", "--settle-ms", "20"], { timeoutMs: 180_000 });
}

function summary(stdout: string): { episodes: number; reward_mean: number; causes: Record<string, number> } {
  return JSON.parse(stdout.trim().split("\n").at(-1)!);
}

for (const task of TASKS) {
  test(`${task}: the scripted solution solves it through farm run --sim`, async () => {
    const r = await farmRun(task, `scripted:${path.join(REPO, "tasks/solutions", `${task}.jsonl`)}`, 1);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^episode=0 steps=\d+ reward=1 outcome=terminated cause=episode_end/m, r.stdout);
    assert.equal(summary(r.stdout).reward_mean, 1);
  });
}

for (const task of TASKS) {
  test(`${task}: the seeded random policy solves none of 5 episodes`, async () => {
    const r = await farmRun(task, "random", 5);
    assert.equal(r.code, 0, r.stderr);
    const s = summary(r.stdout);
    assert.equal(s.episodes, 5);
    assert.equal(s.causes.episode_end ?? 0, 0, r.stdout);
    assert.equal(s.reward_mean, 0);
  });
}
