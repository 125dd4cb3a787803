/**
 * The task families (tasks/families/*.family.yaml) and their solutions (tasks/solutions/<family>.ui.jsonl or
 * .policy.mjs) on simulated devices: each family file is read here (goal template, parameters, set-up, checks) and
 * run for fixed parameters (every value of a choice; words as fixed samples; `map`s derived as the file says),
 * standing in for the farm's family loader: the base task runs with the family's set-up appended to its reset steps
 * (the set-up runs after the reset steps, before the first observation, as FAMILIES.md says) and the rendered goal;
 * then the family's checks are read from the device with adb as a check would read them (`settings get`, the Todo
 * database pulled and queried with Python's sqlite3 with the parameters bound, the agent's answer matched as
 * AndroidWorld's fuzzy match does). The seeded random policy passes none of the checks.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { shQuote } from "@farm/shell-words";
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

type Params = Record<string, string | number>;
interface Check {
  name?: string;
  setting?: { namespace: string; key: string };
  sql?: { db: string; query: string };
  answer?: Record<string, never>;
  equals?: string;
  fuzzy?: string;
  number?: { op: ">=" | "==" | "<=" | ">" | "<" | "!="; value: number };
}
interface Family {
  family: string;
  task: string;
  goal: string;
  params: Record<string, { choice?: unknown[]; int?: unknown; words?: unknown; map?: { param: string; values: Record<string, string> } }>;
  setup?: ({ shell: string } | { setting: { namespace: string; key: string; value: string } })[];
  checks: { combine?: string; items: Check[] };
}

function loadFamily(name: string): Family {
  const f = parseYaml(fs.readFileSync(path.join(TASKS, "families", `${name}.family.yaml`), "utf8")) as Family;
  assert.equal(f.family, name);
  return f;
}

/** The parameters: the given ones, and each `map` from the value of the parameter it names. */
function paramsOf(f: Family, given: Params): Params {
  const out: Params = {};
  for (const [name, decl] of Object.entries(f.params)) {
    if (decl.map) out[name] = decl.map.values[String(out[decl.map.param])]!;
    else {
      assert.ok(Object.hasOwn(given, name), `${f.family}: give ${name}`);
      if (decl.choice) assert.ok(decl.choice.includes(given[name]), `${f.family}: ${name} ${given[name]} is not a choice`);
      out[name] = given[name]!;
    }
    assert.notEqual(out[name], undefined, `${f.family}: ${name}`);
  }
  return out;
}

const render = (t: string, p: Params, word: (v: string) => string = (v) => v): string => t.replace(/\{([a-z][a-z0-9_]*)\}/g, (_, n: string) => word(String(p[n])));

/** The family's set-up as device shell lines ({name} in a shell step: one quoted word). */
function setupLines(f: Family, p: Params): string[] {
  return (f.setup ?? []).map((s) => ("shell" in s ? render(s.shell, p, shQuote) : `settings put ${s.setting.namespace} ${s.setting.key} ${shQuote(render(s.setting.value, p))}`));
}

/** The family's base task with its set-up (device shell lines) after its reset steps. */
function withSetup(f: Family, setup: string[]): LoadedTask {
  const file = path.resolve(TASKS, "families", f.task);
  const text = fs.readFileSync(file, "utf8");
  const marker = "\n]\n\n# ";
  const at = text.indexOf(marker, text.indexOf("reset_steps: ["));
  assert.ok(at > 0, `${f.task}: the end of reset_steps`);
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

/** A database pulled with adb and queried with Python's sqlite3, the parameters bound by name (:name). */
async function sqlValue(serial: string, db: string, sql: string, p: Params): Promise<string> {
  const local = path.join(tmp, `${serial}-${path.basename(db)}`);
  const r = await adbCli(adb.port, serial, ["pull", db, local]);
  assert.equal(r.code, 0, r.stderr);
  const py = "import sqlite3,sys,json\nc=sqlite3.connect(sys.argv[1])\nrow=c.execute(sys.argv[2], json.loads(sys.argv[3])).fetchone()\nprint('' if row is None or row[0] is None else row[0])";
  const named = Object.fromEntries(Object.entries(p).filter(([k]) => sql.includes(`:${k}`)));
  return execFileSync("python3", ["-c", py, local, sql, JSON.stringify(named)], { encoding: "utf8" }).trim();
}

/** AndroidWorld's fuzzy match of an answer: lower case, punctuation and surrounding space removed; numbers as numbers. */
function fuzzy(a: string, b: string): boolean {
  const n = (s: string): string => s.toLowerCase().replace(/[^\p{L}\p{N}\s.]/gu, "").replace(/\.$/, "").trim();
  const [x, y] = [n(a), n(b)];
  return x === y || (x !== "" && y !== "" && Number.isFinite(Number(x)) && Number(x) === Number(y));
}

/** Each of the family's checks, read from the device: the names of those that fail. */
async function failedChecks(f: Family, p: Params, serial: string, t: EpisodeTrajectory): Promise<string[]> {
  const failed: string[] = [];
  for (const [i, c] of f.checks.items.entries()) {
    let value: string;
    if (c.setting) value = await shell(serial, `settings get ${c.setting.namespace} ${c.setting.key}`);
    else if (c.sql) value = await sqlValue(serial, c.sql.db, c.sql.query, p);
    else if (c.answer) value = t.answer ?? "";
    else throw new Error(`${f.family}: checks[${i}]: a source this test does not read`);
    const ok =
      c.equals !== undefined
        ? value === render(c.equals, p)
        : c.fuzzy !== undefined
          ? fuzzy(value, render(c.fuzzy, p))
          : c.number !== undefined
            ? ({ ">=": (a: number, b: number) => a >= b, "==": (a: number, b: number) => a === b, "<=": (a: number, b: number) => a <= b, ">": (a: number, b: number) => a > b, "<": (a: number, b: number) => a < b, "!=": (a: number, b: number) => a !== b })[c.number.op](Number(value), c.number.value)
            : assert.fail(`${f.family}: checks[${i}]: a comparison this test does not make`);
    if (!ok) failed.push(`${c.name ?? `checks[${i}]`} (saw ${JSON.stringify(value)})`);
  }
  return failed;
}

const solutionFile = (family: string): string => {
  for (const ext of [".ui.jsonl", ".policy.mjs"]) if (fs.existsSync(path.join(TASKS, "solutions", family + ext))) return path.join(TASKS, "solutions", family + ext);
  throw new Error(`no solution for ${family}`);
};
const solution = (family: string): Promise<Policy> => {
  const file = solutionFile(family);
  return file.endsWith(".jsonl") ? Promise.resolve(scriptedPolicy(file)) : modulePolicy(file);
};

const CASES: [family: string, params: Params][] = [
  ["settings_wifi_set", { state: "on" }],
  ["settings_wifi_set", { state: "off" }],
  ["settings_bluetooth_set", { state: "on" }],
  ["settings_bluetooth_set", { state: "off" }],
  ["settings_brightness_set", { max_or_min: "max" }],
  ["settings_brightness_set", { max_or_min: "min" }],
  ["todo_note_create", { title: "river lamp", body: "quiet orange tiger" }],
  ["todo_item_check", { title: "Buy bread" }],
  ["todo_item_check", { title: "Walk dog" }],
  ["todo_count_question", { count: 1 }],
  ["todo_count_question", { count: 5 }],
  ["todo_count_question", { count: 7 }],
];

/** The family loader's own example (libs/task tests): Sim Settings' older task, no solution of its own. */
const LOADER_EXAMPLES = new Set(["example_wifi"]);

test("every family file has a solution and a case here", () => {
  const families = fs.readdirSync(path.join(TASKS, "families")).filter((f) => f.endsWith(".family.yaml")).map((f) => f.replace(/\.family\.yaml$/, "")).filter((f) => !LOADER_EXAMPLES.has(f));
  assert.ok(families.length >= 6, families.join(" "));
  for (const f of families) {
    assert.ok(CASES.some(([c]) => c === f), `${f}: no case`);
    assert.ok(solutionFile(f));
  }
});

for (const [family, given] of CASES) {
  test(`${family} ${JSON.stringify(given)}: the solution passes every check, read from the device`, async () => {
    const f = loadFamily(family);
    const p = paramsOf(f, given);
    const { serial, t } = await run(withSetup(f, setupLines(f, p)), render(f.goal, p), await solution(family));
    assert.equal(t.cause, "agent_status", JSON.stringify(t.steps.map((s) => s.ui)));
    assert.deepEqual(await failedChecks(f, p, serial, t), []);
  });
}

for (const [family, given] of [CASES[1]!, CASES[6]!, CASES[10]!]) {
  test(`${family} ${JSON.stringify(given)}: the seeded random policy fails its checks`, async () => {
    const f = loadFamily(family);
    const p = paramsOf(f, given);
    const { serial, t } = await run(withSetup(f, setupLines(f, p)), render(f.goal, p), randomPolicy({ seed: 3 }));
    assert.notDeepEqual(await failedChecks(f, p, serial, t), []);
  });
}
