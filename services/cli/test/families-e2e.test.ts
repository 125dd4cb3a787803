/**
 * Scored by the device, end to end (issue 41): every task family of tasks/families/ on the simulated apps runs with
 * its solution (tasks/solutions/<family>.ui.jsonl or .policy.mjs) and with the random policy through `farm run --sim`,
 * as a user runs it. No family logs a reward: success comes only from its checks of the device's state. The solution
 * scores 1 on every episode (two episodes: two draws of the parameters), the random policy 0; the Avro records and
 * the Parquet data set hold success, the drawn parameters and each check's observed value.
 * The runs share two simulated devices of one adb server (`farm run --device`, as on a desk with an emulator up), the
 * families split between them: a device serves episode after episode of different families, as a worker's does.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readTrajectories } from "@farm/trajectory";
import { exportParquet, queryDataset } from "@farm/dataset";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices, type SimFleet } from "@farm/simulator";
import { REPO, runFarm } from "./fixtures.ts";

const FAMILIES = ["settings_wifi_set", "settings_bluetooth_set", "settings_brightness_set", "todo_note_create", "todo_item_check", "todo_count_question"];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-families-"));
let adb: LocalAdbServer;
let sims: SimFleet;
before(async () => {
  adb = await startAdbServer();
  sims = await startSimulatedDevices({ adbPort: adb.port, count: 2 });
});
after(async () => {
  await sims?.close();
  await adb?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function solutionOf(family: string): string {
  const ui = path.join(REPO, "tasks/solutions", `${family}.ui.jsonl`);
  return fs.existsSync(ui) ? `scripted:${ui}` : `module:${path.join(REPO, "tasks/solutions", `${family}.policy.mjs`)}`;
}

/** One `farm run` of a family; its summary line (the last of stdout) and the per-episode lines. */
async function run(serial: string, family: string, policy: string, episodes: number, seed: number, out: string): Promise<{ lines: string[]; summary: { scores?: { scored: number; successes: number; errors: number } } }> {
  const task = path.join(REPO, "tasks/families", `${family}.family.yaml`);
  const r = await runFarm(["run", task, "--device", serial, "--adb-port", String(adb.port), "--episodes", String(episodes), "--seed", String(seed), "--settle-ms", "20", "--policy", policy, "--out", out], { timeoutMs: 240_000 });
  assert.equal(r.code, 0, `${family} ${policy}: ${r.stderr.slice(-2000)}`);
  const lines = r.stdout.trim().split("\n");
  return { lines: lines.filter((l) => l.startsWith("episode=")), summary: JSON.parse(lines.at(-1)!) };
}

test("each family: its solution scores 1 on every episode, the random policy 0, from the device's state alone", async () => {
  // One lane per device, each running its families one after the other.
  const lanes = sims.devices.map((d, lane) => ({ serial: d.serial, families: FAMILIES.filter((_, i) => i % sims.devices.length === lane) }));
  await Promise.all(
    lanes.map(async ({ serial, families }) => {
      for (const family of families) {
        const solved = await run(serial, family, solutionOf(family), 2, 3, path.join(dir, "solved", family));
        assert.deepEqual(solved.summary.scores, { scored: 2, successes: 2, success_mean: 1, errors: 0 }, `${family} solution: ${solved.lines.join("\n")}`);
        // A seed whose random touches miss (random taps can toggle a switch by chance: seed 11 turns Bluetooth on).
        const random = await run(serial, family, "random", 1, 5, path.join(dir, "random", family));
        assert.equal(random.summary.scores?.scored, 1, `${family} random: ${random.lines.join("\n")}`);
        assert.equal(random.summary.scores?.successes, 0, `${family} random: ${random.lines.join("\n")}`);
        assert.equal(random.summary.scores?.errors, 0, `${family} random: ${random.lines.join("\n")}`);
      }
    }),
  );

  // The records: success, the drawn parameters and each check's observed value, in Avro and in the Parquet data set.
  const episodes = [];
  for await (const e of readTrajectories(path.join(dir, "solved"))) episodes.push(e);
  assert.equal(episodes.length, FAMILIES.length * 2);
  for (const e of episodes) {
    assert.equal(e.success, 1, e.taskId);
    assert.ok(e.checks && e.checks.length > 0 && e.checks.every((c) => c.passed && c.error === undefined), `${e.taskId}: ${JSON.stringify(e.checks)}`);
    assert.ok(e.params && Object.keys(e.params).length > 0, `${e.taskId} records its parameters`);
    assert.equal(e.totalReward, 1, `${e.taskId}: the family's reward of 1 is the only reward (no app logs one)`);
  }
  const ds = path.join(dir, "dataset");
  await exportParquet([path.join(dir, "solved"), path.join(dir, "random")], ds);
  const q = await queryDataset(ds, "SELECT task_id, count(*) AS n, sum(CASE WHEN success = 1 THEN 1 ELSE 0 END) AS ok, min(len(checks)) AS checks, min(length(params)) AS params FROM episodes GROUP BY task_id ORDER BY task_id");
  const rows = q.rows as { task_id: string; n: number | bigint; ok: number | bigint; checks: number | bigint; params: number | bigint }[];
  assert.deepEqual(rows.map((r) => r.task_id), [...FAMILIES].sort());
  for (const r of rows) {
    assert.equal(Number(r.n), 3, r.task_id);
    assert.equal(Number(r.ok), 2, `${r.task_id}: the two solved episodes succeed, the random one does not`);
    assert.ok(Number(r.checks) >= 1 && Number(r.params) > 2, `${r.task_id}: checks and params in the data set`);
  }
});
