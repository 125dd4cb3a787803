/**
 * Every check source and comparison of FAMILIES.md against a simulated device through a private adb server, true
 * and false; checks that cannot run (a hung device, a missing database) are score errors, never a silent 0;
 * hostile definitions (huge output, a backtracking regex, a query that writes, ATTACHes or never ends) come back
 * as clear verdicts or errors within their deadlines.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import initSqlJs from "sql.js";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { AdbDriver, type AdbDevice } from "@farm/adb";
import { pyRegex, type CheckSource, type CheckSpec, type Comparison, type FamilyChecks, type TaskFamily } from "@farm/task";
import { closeSqlThreads, createFamilyInstance, runCheck, scoreChecks, type DeviceCalls, type ScoreLimits } from "@farm/scoring";

const APKS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../tasks/apks");
const T = (text: string) => ({ text, line: 1 });

let adb: LocalAdbServer;
let sims: Awaited<ReturnType<typeof startSimulatedDevices>>;
let driver: AdbDriver;
let dev: AdbDevice;
let calls: DeviceCalls;

function check(source: CheckSource, compare: Comparison, extra: Partial<CheckSpec> = {}): CheckSpec {
  return { name: extra.name ?? `checks[0] ${source.kind}`, source, compare, timeoutSec: extra.timeoutSec ?? 10, line: 7 };
}

async function verdict(spec: CheckSpec, params: Record<string, string | number | boolean> = {}, answer?: string, limits?: Partial<ScoreLimits>) {
  return runCheck(spec, { device: calls, params, ...(answer !== undefined ? { answer } : {}), ...(limits ? { limits } : {}) });
}

before(async () => {
  adb = await startAdbServer();
  sims = await startSimulatedDevices({ adbPort: adb.port, count: 1, seed: 5 });
  driver = new AdbDriver({ port: adb.port });
  dev = driver.device(sims.devices[0]!.serial);
  assert.equal((await dev.waitBootComplete(20_000)).status, "ok");
  calls = {
    execute: (r, o) => dev.execute(r, { timeoutMs: o?.timeoutMs ?? 10_000 }),
    shell: (c, o) => dev.shell(c, { timeoutMs: o?.timeoutMs ?? 10_000 }),
    screenTree: () => dev.screenTree({ timeoutMs: 10_000 }),
  };
});

after(async () => {
  await closeSqlThreads();
  await driver?.close();
  await sims?.close();
  await adb?.close();
});

test("setting: `settings put` then a setting check passes; another value fails; an unset key reads null", async () => {
  assert.equal((await dev.shell("settings put global wifi_on 1")).status, "ok");
  const on = await verdict(check({ kind: "setting", namespace: "global", key: T("wifi_on") }, { kind: "equals", value: T("{want}") }), { want: "1" });
  assert.deepEqual([on.passed, on.observed, on.expected, on.error], [true, "1", '== "1"', undefined]);
  const off = await verdict(check({ kind: "setting", namespace: "global", key: T("wifi_on") }, { kind: "equals", value: T("0") }));
  assert.deepEqual([off.passed, off.observed], [false, "1"]);
  const unset = await verdict(check({ kind: "setting", namespace: "secure", key: T("farm_never_set") }, { kind: "equals", value: T("null") }));
  assert.equal(unset.passed, true);
});

test("shell: output compared by equals, regex (search), number and json path; true and false", async () => {
  const sh = (cmd: string) => ({ kind: "shell", command: T(cmd) }) as const;
  assert.equal((await verdict(check(sh("echo {word}"), { kind: "equals", value: T("hello world") }), { word: "hello world" })).passed, true);
  assert.equal((await verdict(check(sh("echo hi"), { kind: "not_equals", value: T("hi") }))).passed, false);
  assert.equal((await verdict(check(sh("echo brightness=200"), { kind: "regex", regex: pyRegex("=\\d{3}$") }))).passed, true);
  assert.equal((await verdict(check(sh("echo brightness=20"), { kind: "regex", regex: pyRegex("=\\d{3}$") }))).passed, false);
  assert.equal((await verdict(check(sh("echo 42"), { kind: "number", op: ">=", value: 40 }))).passed, true);
  assert.equal((await verdict(check(sh("echo 42"), { kind: "number", op: "<", value: 40 }))).passed, false);
  assert.equal((await verdict(check(sh("echo not-a-number"), { kind: "number", op: "!=", value: 1 }))).passed, false);
  const json = `echo '{"a":[{"b":"x"}],"n":3}'`;
  const j = await verdict(check(sh(json), { kind: "json", path: "$.a[0].b", then: { kind: "equals", value: T("x") } }));
  assert.deepEqual([j.passed, j.observed, j.expected], [true, "x", 'json $.a[0].b == "x"']);
  assert.equal((await verdict(check(sh(json), { kind: "json", path: '$["n"]', then: { kind: "number", op: "==", value: 4 } }))).passed, false);
  assert.equal((await verdict(check(sh(json), { kind: "json", path: "$.missing", then: { kind: "equals", value: T("x") } }))).passed, false);
});

test("shell: a parameter reaches the device as one quoted word, never as shell syntax", async () => {
  const r = await verdict(check({ kind: "shell", command: T("echo {p}") }, { kind: "equals", value: T("a; echo injected") }), { p: "a; echo injected" });
  assert.equal(r.passed, true, r.observed);
});

test("file: content and existence of a pushed file; a missing file is an error for content, `exists: false` for existence", async () => {
  const pushed = await dev.execute({ timeoutSec: 10, cmd: { command: "push", path: "/sdcard/notes/today.txt", content: new TextEncoder().encode("buy milk\n") } });
  assert.equal(pushed.status, "ok", pushed.message);
  const f = (p: string) => ({ kind: "file", path: T(p) }) as const;
  assert.equal((await verdict(check(f("/sdcard/notes/{name}"), { kind: "regex", regex: pyRegex("^buy milk$") }), { name: "today.txt" })).passed, true, "Python's $ matches before a final newline");
  assert.equal((await verdict(check(f("/sdcard/notes/today.txt"), { kind: "equals", value: T("buy milk") }))).passed, false, "file content is compared as it is (not trimmed)");
  assert.equal((await verdict(check(f("/sdcard/notes/today.txt"), { kind: "regex", regex: pyRegex("milk") }))).passed, true);
  assert.equal((await verdict(check(f("/sdcard/notes/today.txt"), { kind: "exists", value: true }))).passed, true);
  assert.equal((await verdict(check(f("/sdcard/notes/none.txt"), { kind: "exists", value: true }))).passed, false);
  assert.equal((await verdict(check(f("/sdcard/notes/none.txt"), { kind: "exists", value: false }))).passed, true);
  const missing = await verdict(check(f("/sdcard/notes/none.txt"), { kind: "equals", value: T("") }));
  assert.equal(missing.passed, false);
  assert.match(missing.error ?? "", /no file at \/sdcard\/notes\/none\.txt/);
});

async function todoDb(rows: [string, number][]): Promise<Uint8Array> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.run("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, done INTEGER)");
  for (const [t, d] of rows) db.run("INSERT INTO notes (title, done) VALUES (?, ?)", [t, d]);
  const bytes = db.export();
  db.close();
  return bytes;
}

test("sql: a database built with sql.js, pushed, then queried with bound :name parameters (first value and row count)", async () => {
  const bytes = await todoDb([["Buy milk", 0], ["Call mom", 1], ["Pay rent", 1]]);
  const db = "/data/data/com.farm.simapps.todo/databases/todo.db";
  assert.equal((await dev.execute({ timeoutSec: 10, cmd: { command: "push", path: db, content: bytes } })).status, "ok");
  const sql = (query: string, rows: "first" | "count" = "first") => ({ kind: "sql", db: T(db), query, rows }) as const;
  const done = await verdict(check(sql("SELECT done FROM notes WHERE title = :title"), { kind: "equals", value: T("1") }), { title: "Call mom" });
  assert.deepEqual([done.passed, done.observed, done.error], [true, "1", undefined]);
  assert.equal((await verdict(check(sql("SELECT done FROM notes WHERE title = :title"), { kind: "equals", value: T("1") }), { title: "Buy milk" })).passed, false);
  const count = await verdict(check(sql("SELECT * FROM notes WHERE done = 1", "count"), { kind: "number", op: "==", value: 2 }));
  assert.deepEqual([count.passed, count.observed], [true, "2"]);
  const none = await verdict(check(sql("SELECT title FROM notes WHERE title = :title"), { kind: "equals", value: T("") }), { title: "no such" });
  assert.deepEqual([none.passed, none.observed], [true, ""]);
});

test("sql: a WAL database as real SQLite leaves it (uncheckpointed -wal beside it) reads with its committed rows", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoring-wal-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  // Python's sqlite3 (the real SQLite) writes the WAL; the files are copied while the connection still holds them open.
  execFileSync("python3", ["-c", `
import sqlite3, shutil, sys
d = sys.argv[1]
c = sqlite3.connect(d + "/live.db")
c.execute("PRAGMA journal_mode=WAL"); c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("CREATE TABLE notes (title TEXT)"); c.commit()
c.execute("INSERT INTO notes VALUES ('in the wal')"); c.commit()
c.execute("BEGIN"); c.execute("INSERT INTO notes VALUES ('uncommitted')")
shutil.copy(d + "/live.db", d + "/copy.db"); shutil.copy(d + "/live.db-wal", d + "/copy.db-wal")
c.rollback(); c.close()
`, dir]);
  const db = "/data/data/com.example.wal/databases/w.db";
  for (const [from, to] of [["copy.db", db], ["copy.db-wal", `${db}-wal`]] as const) {
    const r = await dev.execute({ timeoutSec: 10, cmd: { command: "push", path: to, content: fs.readFileSync(path.join(dir, from)) } });
    assert.equal(r.status, "ok", r.message);
  }
  const r = await verdict(check({ kind: "sql", db: T(db), query: "SELECT group_concat(title) FROM notes", rows: "first" }, { kind: "equals", value: T("in the wal") }));
  assert.deepEqual([r.passed, r.observed, r.error], [true, "in the wal", undefined]);
});

test("sql: a missing database, a query that writes, ATTACHes, runs two statements or never ends: errors, and the score is an error, not 0", async () => {
  const db = "/data/data/com.farm.simapps.todo/databases/todo.db";
  const sql = (query: string) => ({ kind: "sql", db: T(db), query, rows: "first" }) as const;
  const eq = { kind: "equals", value: T("1") } as const;
  const missing = await verdict(check({ kind: "sql", db: T("/data/data/none/databases/x.db"), query: "SELECT 1", rows: "first" }, eq));
  assert.match(missing.error ?? "", /no database at \/data\/data\/none\/databases\/x\.db/);
  assert.match((await verdict(check(sql("DELETE FROM notes"), eq))).error ?? "", /only a SELECT .* not DELETE/);
  assert.match((await verdict(check(sql("ATTACH DATABASE '/tmp/x.db' AS x"), eq))).error ?? "", /only a SELECT .* not ATTACH/);
  assert.match((await verdict(check(sql("SELECT 1; DROP TABLE notes"), eq))).error ?? "", /one statement only/);
  assert.match((await verdict(check(sql("WITH x AS (SELECT 1) INSERT INTO notes (title) SELECT 'x' FROM x"), eq))).error ?? "", /readonly|read-only/i);
  const t0 = performance.now();
  const forever = await verdict(check(sql("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"), eq, { timeoutSec: 1.5 }));
  assert.match(forever.error ?? "", /did not finish in \d+ ms/);
  assert.ok(performance.now() - t0 < 6000, "the runaway query was stopped at its deadline");
  // A query whose value outgrows SQLite's heap bound fails as out of memory. (SQLite reports it once the aggregate has
  // seen every row, so the bound is 8 MB here and the rows 10 MB of text: with the default 256 MB it would need
  // ~2.6 M rows, far past any deadline a test can wait.)
  const big = await verdict(check(sql("SELECT length(group_concat(printf('%0100d', x))) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100000) SELECT x FROM c)"), eq, { timeoutSec: 20 }), {}, undefined, { sqlHeapBytes: 8 * 1024 * 1024 });
  assert.match(big.error ?? "", /out of memory/);
  // The table is still there: nothing was written.
  assert.equal((await verdict(check(sql("SELECT count(*) FROM notes"), { kind: "equals", value: T("3") }))).passed, true);
  const checks: FamilyChecks = { combine: "all", everySteps: 0, reward: 1, items: [check(sql("SELECT 1"), eq, { name: "ok" }), check({ kind: "sql", db: T("/data/data/none/x.db"), query: "SELECT 1", rows: "first" }, eq, { name: "missing db" })] };
  const score = await scoreChecks(checks, { device: calls, params: {} });
  assert.equal(score.success, undefined);
  assert.equal(score.reward, 0);
  assert.match(score.error ?? "", /^missing db: no database at/);
  assert.deepEqual(score.checks.map((c) => [c.name, c.passed]), [["ok", true], ["missing db", false]]);
});

test("tree: a node of a simulated app's screen with a text (or a text regex) exists; one that is not there does not", async () => {
  const r = await dev.execute({ timeoutSec: 30, cmd: { command: "install_apk", location: { kind: "filesystem", path: path.join(APKS, "sim_settings.apk"), declaredPath: "apks/sim_settings.apk" } } });
  assert.equal(r.status, "ok", r.message);
  await dev.shell("am start -W -n com.farm.simapps.settings/com.farm.simapps.settings.MainActivity", { timeoutMs: 10_000 });
  const has = await verdict(check({ kind: "tree", text: T("Location") }, { kind: "exists", value: true }));
  assert.equal(has.passed, true, has.observed + (has.error ?? ""));
  assert.match(has.observed, /^1 matching node: .*"Location"/);
  const re = await verdict(check({ kind: "tree", textRegex: pyRegex("^Loc\\w+on$") }, { kind: "exists", value: true }));
  assert.equal(re.passed, true);
  const notThere = await verdict(check({ kind: "tree", text: T("Teleport") }, { kind: "exists", value: true }));
  assert.deepEqual([notThere.passed, notThere.observed], [false, "0 matching nodes"]);
  assert.equal((await verdict(check({ kind: "tree", text: T("Teleport") }, { kind: "exists", value: false }))).passed, true);
  const act = await verdict(check({ kind: "activity" }, { kind: "regex", regex: pyRegex("^com\\.farm\\.simapps\\.settings/") }));
  assert.equal(act.passed, true, act.observed);
  assert.equal((await verdict(check({ kind: "activity" }, { kind: "equals", value: T("com.android.settings/.Settings") }))).passed, false);
});

test("answer: AndroidWorld-style fuzzy match (case, punctuation, numbers, near-equal); none given is \"\"", async () => {
  const a = (answer: string | undefined, expected: string) => verdict(check({ kind: "answer" }, { kind: "fuzzy", value: T(expected) }), {}, answer).then((r) => r.passed);
  assert.equal(await a("  Paris. ", "paris"), true);
  assert.equal(await a("1,200", "1200.0"), true);
  assert.equal(await a("$12", "12"), true);
  assert.equal(await a("The meeting is at 10", "the meeting is at 10!"), true);
  assert.equal(await a("Londons", "London"), true, "SequenceMatcher ratio 12/13 ≥ 0.9");
  assert.equal(await a("Berlin", "Paris"), false);
  assert.equal(await a("13", "12"), false);
  assert.equal(await a(undefined, "Paris"), false);
});

test("hostile: a command with huge output and a backtracking regex give a bounded verdict in time", async () => {
  const t0 = performance.now();
  const big = new Uint8Array(1024 * 1024 + 10).fill(65);
  assert.equal((await dev.execute({ timeoutSec: 20, cmd: { command: "push", path: "/sdcard/big.txt", content: big } })).status, "ok");
  const huge = await verdict(check({ kind: "shell", command: T("cat /sdcard/big.txt") }, { kind: "regex", regex: pyRegex("^(A+)+b") }, { timeoutSec: 10 }));
  assert.deepEqual([huge.passed, huge.error, huge.observed.length], [false, undefined, 1024]);
  const text = "a".repeat(50_000);
  assert.equal((await dev.execute({ timeoutSec: 10, cmd: { command: "push", path: "/sdcard/a.txt", content: new TextEncoder().encode(text) } })).status, "ok");
  const re = await verdict(check({ kind: "file", path: T("/sdcard/a.txt") }, { kind: "regex", regex: pyRegex("^(a+)+b") }));
  assert.deepEqual([re.passed, re.error], [false, undefined]);
  assert.equal(re.observed.length, 1024);
  assert.ok(re.observed.endsWith("…"));
  assert.ok(performance.now() - t0 < 15_000);
  const over = await verdict(check({ kind: "file", path: T("/sdcard/big.txt") }, { kind: "equals", value: T("") }));
  assert.match(over.error ?? "", /over the 1048576-byte read bound/);
});

test("a hung device: the check times out at its deadline, the score is an error", async () => {
  const fam = family({ items: [check({ kind: "setting", namespace: "global", key: T("wifi_on") }, { kind: "equals", value: T("1") }, { timeoutSec: 1 })] });
  const inst = createFamilyInstance(fam, { index: 0, seed: 1 });
  await inst.initialize(calls, new AbortController().signal);
  sims.devices[0]!.faults.hang(true);
  try {
    const t0 = performance.now();
    const s = await inst.score(calls, { final: true }, new AbortController().signal);
    assert.ok(performance.now() - t0 < 5000);
    assert.equal(s.success, undefined);
    assert.match(s.error ?? "", /did not finish in 1000 ms|timeout/);
  } finally {
    sims.devices[0]!.faults.hang(false);
    await inst.close();
  }
});

function family(checks: Partial<FamilyChecks>, extra: Partial<TaskFamily> = {}): TaskFamily {
  return {
    id: "wifi_set",
    sourcePath: "/tasks/wifi_set.family.yaml",
    taskPath: "/tasks/settings.textproto",
    goal: T("Turn Wi-Fi {state}."),
    params: [
      { name: "state", spec: { kind: "choice", values: ["on", "off"] }, line: 4 },
      { name: "wifi_value", spec: { kind: "const", value: "1" }, line: 5 },
    ],
    setup: [],
    checks: { combine: "all", everySteps: 0, reward: 1, items: [], ...checks },
    ...extra,
  };
}

test("family instance: set-up (shell with a drawn word, setting, file, sleep) then checks; goal from the template; reward × success; fraction", async () => {
  const fam = family(
    {
      combine: "fraction",
      reward: 2,
      items: [
        check({ kind: "setting", namespace: "global", key: T("wifi_on") }, { kind: "equals", value: T("{wifi_value}") }, { name: "wifi" }),
        check({ kind: "file", path: T("/sdcard/state.txt") }, { kind: "equals", value: T("{state}") }, { name: "file" }),
        check({ kind: "shell", command: T("cat /sdcard/word.txt") }, { kind: "equals", value: T("never") }, { name: "word" }),
      ],
    },
    {
      params: [{ name: "state", spec: { kind: "const", value: "on" }, line: 4 }, { name: "wifi_value", spec: { kind: "const", value: "1" }, line: 5 }],
      setup: [
        { kind: "setting", namespace: "global", key: T("wifi_on"), value: T("{wifi_value}"), timeoutSec: 0, line: 8 },
        { kind: "file", path: T("/sdcard/state.txt"), content: T("{state}"), timeoutSec: 0, line: 9 },
        { kind: "shell", command: T("echo {state} > /sdcard/word.txt"), timeoutSec: 5, line: 10 },
        { kind: "sleep", seconds: 0.05, line: 11 },
      ],
    },
  );
  const inst = createFamilyInstance(fam, { index: 3, seed: 9 }, { description: "unused" });
  const init = await inst.initialize(calls, new AbortController().signal);
  assert.equal(init.goal, "Turn Wi-Fi on.");
  assert.deepEqual({ ...init.params }, { state: "on", wifi_value: "1" });
  const s = await inst.score(calls, { final: true }, new AbortController().signal);
  assert.equal(s.error, undefined, s.error);
  assert.deepEqual(s.checks.map((c) => [c.name, c.passed, c.observed]), [["wifi", true, "1"], ["file", true, "on"], ["word", false, "on"]]);
  assert.equal(s.success, 2 / 3);
  assert.equal(s.reward, 4 / 3);
  const given = createFamilyInstance(fam, { index: 3, seed: 9, goal: "The campaign's goal" });
  assert.equal((await given.initialize(calls, new AbortController().signal)).goal, "The campaign's goal");
  const noTemplate = createFamilyInstance({ ...fam, goal: undefined }, { index: 3, seed: 9 }, { description: "The task's description" });
  assert.equal((await noTemplate.initialize(calls, new AbortController().signal)).goal, "The task's description");
});

test("family instance: a set-up step that fails rejects naming the file, line and why", async () => {
  const fam = family({}, { setup: [{ kind: "shell", command: T("no_such_command_here"), timeoutSec: 5, line: 12 }] });
  await assert.rejects(createFamilyInstance(fam, { index: 0, seed: 1 }).initialize(calls, new AbortController().signal), /wifi_set\.family\.yaml:12\): set-up step 1 \(shell\): shell "no_such_command_here" failed: .*not found/);
  const fam2 = family({}, { setup: [{ kind: "setting", namespace: "global", key: T("wifi_on"), value: T(""), timeoutSec: 0, line: 13 }] });
  await assert.rejects(createFamilyInstance(fam2, { index: 0, seed: 1 }).initialize(calls, new AbortController().signal), /:13\): set-up step 1 \(setting\): settings put global wifi_on: failed_precondition/);
});
