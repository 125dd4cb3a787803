/**
 * The parts of scoring that need no device: the fuzzy ratio against Python's own difflib, a hot rollback journal
 * written by the real SQLite (Python's sqlite3) played back, JSON paths, and how verdicts combine.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fuzzyEquals, scoreChecks, closeSqlThreads, type DeviceCalls } from "@farm/scoring";
import { similarity } from "../src/fuzzy.ts";
import { databaseImage } from "../src/sqlite-files.ts";
import { runSqlQuery } from "../src/sql-thread.ts";
import { parseJsonPath, selectJsonPath } from "../src/json-path.ts";
import type { CheckSpec } from "@farm/task";

test("similarity is difflib's SequenceMatcher ratio (checked against Python's difflib, autojunk included)", () => {
  const pairs: [string, string][] = [
    ["london", "londons"],
    ["the quick brown fox", "the quick brown dog"],
    ["abcd", "dcba"],
    ["", ""],
    ["a", ""],
    ["meeting at 10 am", "meeting at 10am"],
    ["x".repeat(150) + "ab".repeat(60), "ab".repeat(70) + "x".repeat(90)],
    ["private note about the quarterly numbers and the team offsite in spring", "private notes about quarterly numbers and team off-site in the spring"],
  ];
  const py = execFileSync("python3", ["-c", "import difflib, json, sys\nfor a, b in json.load(sys.stdin): print(repr(difflib.SequenceMatcher(None, a, b).ratio()))"], { input: JSON.stringify(pairs) }).toString().trim().split("\n").map(Number);
  assert.deepEqual(pairs.map(([a, b]) => similarity(a, b)), py);
});

test("fuzzy: normalised equality, numbers as numbers, near-equal texts", () => {
  assert.equal(fuzzyEquals("Hello, World!", "hello world"), true);
  assert.equal(fuzzyEquals("3.50", "3.5"), true);
  assert.equal(fuzzyEquals("3.50", "3.6"), false);
  assert.equal(fuzzyEquals("", "x"), false);
  assert.equal(fuzzyEquals("", ""), true);
});

test("a hot rollback journal (the real SQLite's, mid-transaction) is played back: the database reads as before the transaction", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "scoring-journal-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  execFileSync("python3", ["-c", `
import sqlite3, shutil, sys
d = sys.argv[1]
c = sqlite3.connect(d + "/live.db", isolation_level=None)
c.execute("PRAGMA journal_mode=DELETE"); c.execute("PRAGMA cache_size=2")
c.execute("CREATE TABLE t (v TEXT)"); c.execute("CREATE TABLE u (v TEXT)")
c.execute("BEGIN"); [c.execute("INSERT INTO t VALUES (?)", ("before" + str(i),)) for i in range(50)]; c.execute("COMMIT")
c.execute("BEGIN"); c.execute("UPDATE t SET v = 'changed'"); [c.execute("INSERT INTO u VALUES (?)", ("x" * 500,)) for i in range(400)]
shutil.copy(d + "/live.db", d + "/copy.db"); shutil.copy(d + "/live.db-journal", d + "/copy.db-journal")
c.execute("ROLLBACK"); c.close()
`, dir]);
  const db = fs.readFileSync(path.join(dir, "copy.db"));
  const journal = fs.readFileSync(path.join(dir, "copy.db-journal"));
  const q = (image: Uint8Array) => runSqlQuery({ image, query: "SELECT count(*) || ':' || min(v) FROM t", params: {}, rows: "first", maxValueBytes: 1000, heapBytes: 64 << 20 }, 10_000);
  try {
    const rolled = await q(databaseImage(new Uint8Array(db), { journal: new Uint8Array(journal) })!);
    assert.deepEqual(rolled, { id: rolled.id, ok: true, value: "50:before0", rows: 1 });
    const raw = await q(databaseImage(new Uint8Array(db), {})!);
    assert.notDeepEqual(raw, { id: raw.id, ok: true, value: "50:before0", rows: 1 }, "the copy holds the transaction's spilled pages");
  } finally {
    await closeSqlThreads();
  }
});

test("json paths: names, quoted names, indexes; own properties only", () => {
  assert.deepEqual(parseJsonPath(`$.a[0]["b c"]['d']`), ["a", 0, "b c", "d"]);
  assert.equal(selectJsonPath({ a: [{ "b c": { d: 5 } }] }, parseJsonPath(`$.a[0]["b c"]['d']`)), 5);
  assert.equal(selectJsonPath({}, parseJsonPath("$.constructor")), undefined);
  assert.throws(() => parseJsonPath("a.b"), /does not start with \$/);
  assert.throws(() => parseJsonPath("$..b"), /a name must follow/);
});

test("combine: all, any and fraction over the verdicts; reward = family reward × success; no checks = success 0", async () => {
  const device: DeviceCalls = {
    execute: async () => ({ status: "ok", message: "", output: "", durationMs: 0 }),
    shell: async () => ({ status: "ok", message: "", stdout: "", durationMs: 0 }),
    screenTree: async () => ({ status: "timeout", message: "", output: "", durationMs: 0, outcome: "timeout", source: "uiautomator" }),
  };
  const item = (expected: string): CheckSpec => ({ name: expected, source: { kind: "answer" }, compare: { kind: "equals", value: { text: expected, line: 1 } }, timeoutSec: 1, line: 1 });
  const items = [item("yes"), item("no"), item("no"), item("no")];
  const run = (combine: "all" | "any" | "fraction") => scoreChecks({ combine, everySteps: 0, reward: 3, items }, { device, params: {}, answer: "yes" });
  assert.deepEqual([(await run("all")).success, (await run("any")).success, (await run("fraction")).success, (await run("fraction")).reward], [0, 1, 0.25, 0.75]);
  assert.equal((await scoreChecks({ combine: "all", everySteps: 0, reward: 1, items: [] }, { device, params: {} })).success, 0);
});
