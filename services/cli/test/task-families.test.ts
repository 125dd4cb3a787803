/**
 * `farm task validate` and `farm task show` on task families (libs/task/FAMILIES.md): a folder with task files and
 * families validates; a bad family is named at file:line:column with the field and what to do; `show` prints the
 * family's parameters, set-up and checks beside the task it runs.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { REPO } from "./fixtures.ts";

const run = promisify(execFile);
const FARM = path.join(REPO, "services/cli/bin/farm.js");
const tmp = mkdtempSync(path.join(tmpdir(), "farm-families-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

const farm = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
  try {
    return { code: 0, ...(await run(process.execPath, [FARM, ...args], { cwd: REPO, timeout: 120_000 })) };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === "number" ? x.code : -1, stdout: x.stdout ?? "", stderr: x.stderr ?? "" };
  }
};

test("farm task validate: the project's tasks folder, families included, is valid", async () => {
  const r = await farm("task", "validate", path.join(REPO, "tasks"));
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^\d+ valid, 0 invalid$/m);
});

test("farm task validate: bad families are named at file:line:column with the field; exit code 1", async () => {
  const dir = path.join(tmp, "set");
  mkdirSync(path.join(dir, "families"), { recursive: true });
  copyFileSync(path.join(REPO, "tasks/settings_turn_on_wifi.textproto"), path.join(dir, "wifi.textproto"));
  copyFileSync(path.join(REPO, "tasks/families/example_wifi.family.yaml"), path.join(dir, "families/ok.family.yaml"));
  writeFileSync(path.join(dir, "families/ok.family.yaml"), readFileSync(path.join(dir, "families/ok.family.yaml"), "utf8").replace("../settings_turn_on_wifi.textproto", "../wifi.textproto"));
  writeFileSync(path.join(dir, "families/typo.family.yaml"), `family: typo\ntask: ../wifi.textproto\ngoal: "Turn Wi-Fi {stat}."\nparams:\n  state: { choice: ["on", "off"] }\n`);
  writeFileSync(path.join(dir, "families/sql.family.yaml"), `family: sql\ntask: ../wifi.textproto\nparams:\n  t: { words: { count: 2 } }\nchecks:\n  items:\n    - sql: { db: /data/data/p/databases/x.db, query: "SELECT 1 FROM notes WHERE title = '{t}'" }\n      equals: "1"\n`);
  writeFileSync(path.join(dir, "families/missing.family.yaml"), `family: missing\ntask: ../nowhere.textproto\n`);
  const r = await farm("task", "validate", dir);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  const lines = r.stdout.trim().split("\n");
  assert.equal(lines.at(-1), "2 valid, 3 invalid");
  assert.match(r.stdout, /families\/missing\.family\.yaml:2:7: task: cannot read \.\.\/nowhere\.textproto: .* \(check the path; it is relative to this family file\)$/m);
  assert.match(r.stdout, /families\/sql\.family\.yaml:7:90: checks\.items\[0\]\.sql\.query: \{t\} in a SQL query: parameters are bound, never substituted \(write :t, an SQLite named parameter\)$/m);
  assert.match(r.stdout, /families\/typo\.family\.yaml:3:19: goal: \{stat\} names no parameter \(declared: state\)/);
});

test("farm task show: a family's id, hash, parameters and checks beside the task it runs", async () => {
  const r = await farm("task", "show", path.join(REPO, "tasks/families/example_wifi.family.yaml"));
  assert.equal(r.code, 0, r.stderr);
  const shown = JSON.parse(r.stdout) as { id: string; hash: string; family: { params: { name: string; spec: { values: unknown } }[]; checks: { items: unknown[] } }; task: { description: string; resetSteps: unknown[] } };
  assert.equal(shown.id, "example_wifi");
  assert.match(shown.hash, /^[0-9a-f]{64}$/);
  assert.equal(shown.task.description, "Turn Wi-Fi {state}.");
  assert.ok(shown.task.resetSteps.length > 0);
  assert.deepEqual(shown.family.params.map((p) => p.name), ["state", "command", "start_command", "wifi_value"]);
  assert.deepEqual(shown.family.params[3]!.spec.values, { on: "1", off: "0" });
  assert.equal(shown.family.checks.items.length, 1);
});
