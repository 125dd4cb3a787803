/** `farm run --reset`: start snapshots on a simulated emulator (--sim), the mode refused for a seeded reset, a bad mode named. */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO, runFarm } from "./fixtures.ts";

const farm = (args: string[], timeoutMs = 90_000) => runFarm(args, { timeoutMs });

test("farm run --sim --reset start-snapshot: the first episode saves, the others load the start snapshot", async () => {
  const r = await farm(["run", "tasks/classic_2048.textproto", "--episodes", "3", "--sim", "--settle-ms", "20", "--reset", "start-snapshot"]);
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
  assert.equal(summary.reset_mode, "start-snapshot");
  assert.deepEqual(summary.resets, { steps: 1, start_snapshot: 2 });
});

test("farm run --reset: start-snapshot refused for a seeded reset (task, step, line); an unknown mode named", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-run-reset-"));
  try {
    const file = path.join(dir, "seeded.textproto");
    fs.writeFileSync(
      file,
      `id: "seeded"
setup_steps: [ { adb_call: { install_apk: { filesystem: { path: "sim_notes.apk" } } } } ]
reset_steps: [
  { adb_call: { start_random_activity: { activity_list: ["com.farm.simapps.notes/com.farm.simapps.notes.MainActivity"] timeout_sec: 2.0 } } }
]
max_num_steps: 5
log_parsing_config: { filters: ["AndroidRLTask:V"] log_regexps: { reward: "^[Rr]eward: ([-+]?[0-9]*)$" } }
`,
    );
    const refused = await farm(["run", file, "--sim", "--reset", "start-snapshot", "--apk-dir", path.join(REPO, "tasks/apks")]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /seeded\.textproto: --reset start-snapshot is refused: task 'seeded' reset_steps\[0\] \(line 4\): start_random_activity/);
    const bad = await farm(["run", file, "--sim", "--reset", "snapshot"]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--reset must be one of steps, setup-snapshot, start-snapshot, got 'snapshot'/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
