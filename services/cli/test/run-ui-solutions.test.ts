/**
 * The UI-action solutions in tasks/solutions/*.ui.jsonl (AndroidWorld's JSON actions: element indices, input_text,
 * keyboard_enter) solve their tasks through `farm run --sim`, as the touch solutions do (run-apps.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { REPO, runFarm } from "./fixtures.ts";

function farmRun(task: string, policy: string) {
  return runFarm(["run", path.join(REPO, "tasks", `${task}.textproto`), "--episodes", "1", "--policy", policy, "--seed", "7", "--sim", "--settle-ms", "20"], { timeoutMs: 180_000 });
}

for (const task of ["todo_create_note", "settings_turn_on_wifi"]) {
  test(`${task}: the UI-action solution solves it through farm run --sim`, async () => {
    const r = await farmRun(task, `scripted:${path.join(REPO, "tasks/solutions", `${task}.ui.jsonl`)}`);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^episode=0 steps=\d+ reward=1 outcome=terminated cause=episode_end/m, r.stdout);
    const summary = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { reward_mean: number };
    assert.equal(summary.reward_mean, 1);
  });
}
