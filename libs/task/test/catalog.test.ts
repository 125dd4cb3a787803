/** The one TaskCatalog: loads files/folders, skips invalid files through onInvalid, reloads on a miss when asked. */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TaskCatalog, type TaskLoadError } from "../src/index.ts";

const TASKS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../tasks");

test("fromFiles: tasks by id, sorted ids, apks/ beside the task folder; a bad file is reported and skipped", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "catalog-"));
  try {
    fs.copyFileSync(path.join(TASKS, "sim_notes.textproto"), path.join(dir, "sim_notes.textproto"));
    fs.writeFileSync(path.join(dir, "broken.textproto"), "id: \n");
    fs.mkdirSync(path.join(dir, "apks"));
    const bad: TaskLoadError[] = [];
    const c = TaskCatalog.fromFiles([dir], { apksBesideTasks: true, onInvalid: (e) => bad.push(e) });
    assert.deepEqual(c.ids(), ["sim_notes"]);
    assert.equal(c.get("sim_notes")?.task.id, "sim_notes");
    assert.match(c.get("sim_notes")?.hash ?? "", /^[0-9a-f]{64}$/);
    assert.deepEqual(c.apkDirs, [path.join(dir, "apks")]);
    assert.equal(bad.length, 1);
    assert.match(bad[0]!.message, /broken\.textproto:\d+: /);
    assert.equal(c.describe(), dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("reloadOnMiss picks up a file added after start-up; without it the catalog stays as loaded", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "catalog-"));
  try {
    const reloading = TaskCatalog.fromFiles([dir], { reloadOnMiss: true });
    const fixed = TaskCatalog.fromFiles([dir]);
    assert.equal(reloading.get("sim_notes"), undefined);
    fs.copyFileSync(path.join(TASKS, "sim_notes.textproto"), path.join(dir, "sim_notes.textproto"));
    assert.equal(reloading.get("sim_notes")?.task.id, "sim_notes");
    assert.equal(fixed.get("sim_notes"), undefined);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("of: a fixed set of tasks that only name id and hash", () => {
  const c = TaskCatalog.of([{ task: { id: "b" }, hash: "2" }, { task: { id: "a" }, hash: "1" }]);
  assert.deepEqual(c.ids(), ["a", "b"]);
  assert.equal(c.get("b")?.hash, "2");
  assert.equal(c.get("zzz"), undefined);
});
