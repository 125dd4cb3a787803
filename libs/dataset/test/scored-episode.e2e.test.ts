/**
 * Issue 41 end to end on a simulated device: a task family's instance (parameters, set-up, a setting check every
 * 2 steps, a goal template) runs with an episode — its goal is the policy's, the check turns true mid-episode
 * (goal_reached), the reward is added — and a second family whose database is missing ends with a score error
 * (not a 0). Both are written as Avro, read back, exported to Parquet and queried with DuckDB (`queryDataset`).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { AdbDriver } from "@farm/adb";
import { lift, type Policy } from "@farm/policy";
import { loadTaskFile, type TaskFamily } from "@farm/task";
import { closeSqlThreads, createFamilyInstance } from "@farm/scoring";
import { DeviceSession, type EpisodeTrajectory } from "@farm/episode";
import { episodeIdOf, readTrajectories, type StoredEpisode } from "@farm/trajectory";
import { exportParquet, queryDataset } from "@farm/dataset";
import { tempDir, writeAvro } from "./helpers.ts";

const TASKS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../tasks");
const T = (text: string, line = 1) => ({ text, line });

let adb: LocalAdbServer;
let sim: Awaited<ReturnType<typeof startSimulatedDevices>>;
let driver: AdbDriver;

before(async () => {
  adb = await startAdbServer();
  sim = await startSimulatedDevices({ adbPort: adb.port, count: 1, seed: 11 });
  driver = new AdbDriver({ host: "127.0.0.1", port: adb.port });
});

after(async () => {
  await closeSqlThreads();
  await driver?.close();
  await sim?.close();
  await adb?.close();
});

/** Wi-Fi set to a drawn state; the set-up puts the opposite in the settings provider. */
function wifiFamily(taskPath: string): TaskFamily {
  return {
    id: "wifi_set",
    sourcePath: path.join(TASKS, "wifi_set.family.yaml"),
    taskPath,
    goal: T("Turn Wi-Fi {state}.", 3),
    params: [
      { name: "state", spec: { kind: "choice", values: ["on"] }, line: 5 },
      { name: "wifi_value", spec: { kind: "const", value: "1" }, line: 6 },
      { name: "initial_value", spec: { kind: "const", value: "0" }, line: 7 },
    ],
    setup: [{ kind: "setting", namespace: "global", key: T("wifi_on"), value: T("{initial_value}"), timeoutSec: 0, line: 9 }],
    checks: { combine: "all", everySteps: 2, reward: 1, items: [{ name: "wifi", source: { kind: "setting", namespace: "global", key: T("wifi_on") }, compare: { kind: "equals", value: T("{wifi_value}") }, timeoutSec: 5, line: 13 }] },
  };
}

test("a family's episode: goal from the template, goal_reached by every_steps, reward added; a missing database is a score error; Avro → Parquet → DuckDB", async () => {
  const loaded = loadTaskFile(path.join(TASKS, "settings_turn_on_wifi.textproto"), { apkDirs: [path.join(TASKS, "apks")] });
  const device = driver.device(sim.devices[0]!.serial);
  const session = await DeviceSession.open({ device, task: loaded, config: { settleMs: 20, adbCallTimeoutMs: 5000, appScreenCheckEverySteps: 0, apkDirs: [path.join(TASKS, "apks")] } });
  assert.equal(session.state, "ready", session.unusableReason);
  const goals: string[] = [];
  let acts = 0;
  // Stands in for an agent: on its 3rd answer "turns Wi-Fi on" (through adb), otherwise it lifts the finger.
  const policy: Policy = {
    name: "stand-in",
    version: "1",
    needsPixels: false,
    async reset(r) {
      acts = 0;
      goals.push(r.goal ?? "");
    },
    async act() {
      if (++acts === 3) assert.equal((await device.shell("settings put global wifi_on 1")).status, "ok");
      return lift();
    },
    async close() {},
  };
  const fam = wifiFamily(loaded.sourcePath);
  const t0 = await session.runEpisode({ seed: 7, index: 0, policy, instance: createFamilyInstance(fam, { campaignId: "camp-fam", index: 0, seed: 7 }, { description: loaded.task.description }) });
  assert.deepEqual([t0.outcome, t0.cause, t0.steps.length], ["terminated", "goal_reached", 4]);
  assert.equal(t0.goal, "Turn Wi-Fi on.");
  assert.deepEqual(goals, ["Turn Wi-Fi on."]);
  assert.deepEqual({ ...t0.params }, { state: "on", wifi_value: "1", initial_value: "0" });
  assert.equal(t0.success, 1);
  assert.deepEqual(t0.checks, [{ name: "wifi", kind: "setting", passed: true, observed: "1", expected: '== "1"' }]);
  assert.equal(t0.steps.at(-1)!.reward, 1);

  const broken: TaskFamily = {
    ...fam,
    id: "notes_db",
    checks: { combine: "all", everySteps: 0, reward: 1, items: [{ name: "notes", source: { kind: "sql", db: T("/data/data/com.farm.simapps.todo/databases/todo.db"), query: "SELECT count(*) FROM notes", rows: "first" }, compare: { kind: "number", op: ">=", value: 1 }, timeoutSec: 5, line: 20 }] },
  };
  const t1 = await session.runEpisode({ seed: 8, index: 1, policy, limits: { maxEpisodeSteps: 2 }, instance: createFamilyInstance(broken, { index: 1, seed: 8 }) });
  assert.equal(t1.cause, "step_limit");
  assert.equal(t1.success, undefined);
  assert.match(t1.scoreError ?? "", /^notes: no database at \/data\/data\/com\.farm\.simapps\.todo\/databases\/todo\.db/);
  assert.equal(t1.counters.instance_score_errors, 1);
  assert.equal(t1.totalReward, 0);
  await session.close();

  const src = await tempDir();
  const record = (t: EpisodeTrajectory, i: number) => ({ ...t, episodeId: episodeIdOf("camp-fam", i), campaignId: "camp-fam", episodeIndex: i, attempt: 1, worker: "test" });
  await writeAvro(src, "w", [record(t0, 0), record(t1, 1)]);
  const back: StoredEpisode[] = [];
  for await (const e of readTrajectories(src)) back.push(e);
  back.sort((a, b) => a.episodeIndex - b.episodeIndex);
  assert.deepEqual(back.map((e) => [e.cause, e.success, e.scoreError?.slice(0, 9), { ...e.params }.state]), [["goal_reached", 1, undefined, "on"], ["step_limit", undefined, "notes: no", "on"]]);

  for (const layout of ["steps", "episodes-nested"] as const) {
    const out = await tempDir();
    await exportParquet([src], out, { layout });
    const q = await queryDataset(out, "SELECT episode_index, cause, goal, success, params, checks, score_error, episode_return FROM episodes ORDER BY episode_index");
    assert.deepEqual(
      q.rows.map((r) => [r.episode_index, r.cause, r.goal, r.success, JSON.parse(r.params as string), (r.checks as { name: string; passed: boolean; observed: string; error: string | null }[]).map((c) => [c.name, c.passed, c.observed, c.error?.slice(0, 20) ?? null]), (r.score_error as string | null)?.slice(0, 9) ?? null, r.episode_return]),
      [
        [0, "goal_reached", "Turn Wi-Fi on.", 1, { initial_value: "0", state: "on", wifi_value: "1" }, [["wifi", true, "1", null]], null, 1],
        [1, "step_limit", "Turn Wi-Fi on.", null, { initial_value: "0", state: "on", wifi_value: "1" }, [["notes", false, "", "no database at /data"]], "notes: no", 0],
      ],
      layout,
    );
  }
});
