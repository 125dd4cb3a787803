/**
 * The task families' solutions (tasks/solutions/<family>.ui.jsonl or .policy.mjs) reach their goals on simulated
 * devices, checked by reading the device's state with adb as the families' checks do (settings get, the Todo
 * database pulled and opened with Python's sqlite3, the agent's answer). The family loader is another part of the
 * farm: here each family's base task runs with the family's set-up, for fixed parameters, appended to its reset
 * steps (the set-up runs after the reset steps, before the first observation, as FAMILIES.md says), and the goal
 * is the family's template rendered by hand. Every drawn value of a choice is tried; words are fixed samples.
 * The seeded random policy is run beside them: it does not reach the goals.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { AdbDriver } from "@farm/adb";
import { modulePolicy, randomPolicy, scriptedPolicy, type Policy } from "@farm/policy";
import { parseTaskText, type LoadedTask } from "@farm/task";
import { DeviceSession, type EpisodeConfig, type EpisodeTrajectory } from "@farm/episode";
import { startSimulatedDevices, type SimFleet } from "../src/index.ts";
import { adbCli } from "../src/testing.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const TASKS = path.join(REPO, "tasks");
const DEVICES = 4;
const CONFIG: EpisodeConfig = { settleMs: 20, logSettleMs: 20, stepTimeoutMs: 20_000, resetTimeoutMs: 30_000, adbCallTimeoutMs: 10_000, recoveryBackoffMs: 100, recoveryWaitMs: 5000, appScreenCheckEverySteps: 0 };

let adb: LocalAdbServer;
let fleet: SimFleet;
let driver: AdbDriver;
let tmp: string;
let next = 0;

before(async () => {
  adb = await startAdbServer();
  fleet = await startSimulatedDevices({ adbPort: adb.port, count: DEVICES, emulator: { discovery: false } });
  driver = new AdbDriver({ host: "127.0.0.1", port: adb.port, actionTimeoutMs: 5000, queryTimeoutMs: 5000 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "family-solutions-"));
});

after(async () => {
  await driver?.close();
  await fleet?.close();
  await adb?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const q = (s: string): string => JSON.stringify(s);

/** The base task with the family's set-up (device shell lines, as the family renders them) after its reset steps. */
function withSetup(base: string, setup: string[]): LoadedTask {
  const file = path.join(TASKS, base);
  const text = fs.readFileSync(file, "utf8");
  const marker = "\n]\n\n# ";
  const at = text.indexOf(marker, text.indexOf("reset_steps: ["));
  assert.ok(at > 0, `${base}: the end of reset_steps`);
  const steps = setup.map((line) => `,\n  { adb_request: { generic: { args: ["shell", ${q(line)}] } } }`).join("");
  return parseTaskText(text.slice(0, at) + steps + text.slice(at), { sourcePath: file, apkDirs: [path.join(TASKS, "apks")] });
}

async function run(task: LoadedTask, goal: string, policy: Policy): Promise<{ serial: string; t: EpisodeTrajectory }> {
  const serial = fleet.emulators[next++ % DEVICES]!.serial;
  const s = await DeviceSession.open({ device: driver.device(serial), task, config: CONFIG });
  assert.equal(s.state, "ready", s.unusableReason);
  try {
    const t = await s.runEpisode({ seed: 7, index: 0, policy, goal, limits: { maxEpisodeSteps: 30 } });
    return { serial, t };
  } finally {
    await s.close();
  }
}

async function shell(serial: string, line: string): Promise<string> {
  const r = await adbCli(adb.port, serial, ["shell", line]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.toString().trim();
}

/** The Todo database pulled with adb and queried with Python's sqlite3 (parameters bound). */
async function todoQuery(serial: string, sql: string, params: string[] = []): Promise<string> {
  const local = path.join(tmp, `todo-${serial}.db`);
  const r = await adbCli(adb.port, serial, ["pull", "/data/data/com.farm.simapps.todo/databases/todo.db", local]);
  assert.equal(r.code, 0, r.stderr);
  const py = "import sqlite3,sys\nc=sqlite3.connect(sys.argv[1])\nprint(c.execute(sys.argv[2], sys.argv[3:]).fetchone()[0])";
  return execFileSync("python3", ["-c", py, local, sql, ...params], { encoding: "utf8" }).trim();
}

const solution = (file: string): Promise<Policy> => (file.endsWith(".jsonl") ? Promise.resolve(scriptedPolicy(path.join(TASKS, "solutions", file))) : modulePolicy(path.join(TASKS, "solutions", file)));

for (const state of ["on", "off"]) {
  for (const [family, key] of [
    ["settings_wifi_set", "wifi_on"],
    ["settings_bluetooth_set", "bluetooth_on"],
  ] as const) {
    test(`${family} (${state}): the UI solution leaves global ${key} at ${state === "on" ? 1 : 0}`, async () => {
      const task = withSetup("settings_app.textproto", [`settings put global ${key} ${state === "on" ? 0 : 1}`]);
      const goal = `Turn ${family === "settings_wifi_set" ? "Wi-Fi" : "Bluetooth"} ${state}.`;
      const { serial, t } = await run(task, goal, await solution(`${family}.ui.jsonl`));
      assert.equal(t.cause, "agent_status", JSON.stringify(t.steps.map((s) => s.ui)));
      assert.equal(await shell(serial, `settings get global ${key}`), state === "on" ? "1" : "0");
    });
  }
}

for (const level of ["max", "min"]) {
  test(`settings_brightness_set (${level}): the module solution leaves system screen_brightness at ${level === "max" ? 255 : 1}`, async () => {
    const task = withSetup("settings_app.textproto", ["settings put system screen_brightness_mode 0", `settings put system screen_brightness ${level === "max" ? 1 : 255}`]);
    const { serial, t } = await run(task, `Turn brightness to the ${level} value.`, await solution("settings_brightness_set.policy.mjs"));
    assert.equal(t.cause, "agent_status", JSON.stringify(t.steps.map((s) => s.ui)));
    assert.equal(await shell(serial, "settings get system screen_brightness"), level === "max" ? "255" : "1");
  });
}

test("todo_note_create: the module solution saves the drawn note; the database holds it", async () => {
  const [title, body] = ["river lamp", "quiet orange tiger"];
  const { serial, t } = await run(withSetup("todo_app.textproto", []), `Create a note in Todo titled "${title}" with the text "${body}".`, await solution("todo_note_create.policy.mjs"));
  assert.equal(t.cause, "agent_status", JSON.stringify(t.steps.map((s) => s.ui)));
  assert.equal(await todoQuery(serial, "SELECT count(*) FROM notes WHERE title = ? AND body = ?", [title, body]), "1");
});

for (const title of ["Buy bread", "Walk dog"]) {
  test(`todo_check_item (${title}): the module solution marks it done, and nothing else`, async () => {
    const { serial, t } = await run(withSetup("todo_app.textproto", []), `Mark the note "${title}" as done in Todo.`, await solution("todo_check_item.policy.mjs"));
    assert.equal(t.cause, "agent_status", JSON.stringify(t.steps.map((s) => s.ui)));
    assert.equal(await todoQuery(serial, "SELECT done FROM notes WHERE title = ?", [title]), "1");
    assert.equal(await todoQuery(serial, "SELECT count(*) FROM notes WHERE done = 1 AND title != ?", [title]), "0");
  });
}

for (const count of [1, 5, 7]) {
  test(`todo_count_question (${count}): the set-up leaves ${count} notes and the module solution answers ${count}`, async () => {
    // The family's set-up line with {count} rendered as one shell word between the two double-quoted parts.
    const setup = `sqlite3 /data/data/com.farm.simapps.todo/databases/todo.db "DELETE FROM notes; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < "${count}") INSERT INTO notes (title, body) SELECT 'Errand ' || i, 'item ' || i FROM n"`;
    const { serial, t } = await run(withSetup("todo_app.textproto", [setup]), "How many notes are there in the Todo app? Answer with the number only.", await solution("todo_count_question.policy.mjs"));
    assert.equal(await todoQuery(serial, "SELECT count(*) FROM notes"), String(count));
    assert.equal(t.answer, String(count));
  });
}

test("the seeded random policy reaches none of the goals", async () => {
  const wifi = await run(withSetup("settings_app.textproto", ["settings put global wifi_on 1"]), "Turn Wi-Fi off.", randomPolicy({ seed: 3 }));
  assert.equal(await shell(wifi.serial, "settings get global wifi_on"), "1");
  const note = await run(withSetup("todo_app.textproto", []), 'Create a note in Todo titled "river lamp" with the text "quiet orange tiger".', randomPolicy({ seed: 3 }));
  assert.equal(await todoQuery(note.serial, "SELECT count(*) FROM notes WHERE title = ?", ["river lamp"]), "0");
  assert.equal(note.t.answer, undefined);
});
