import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { findApk, loadTaskFile, loadTaskSet } from "../src/index.ts";
import { resolveApk, taskHash } from "@farm/task/testing";
import { tasksDir } from "./helpers.ts";

test("the hash is stable across loads and across a copy of the file in another folder", () => {
  const original = join(tasksDir, "classic_2048.textproto");
  const a = loadTaskFile(original);
  const b = loadTaskFile(original);
  assert.match(a.hash, /^[0-9a-f]{64}$/);
  assert.equal(a.hash, b.hash);
  assert.equal(taskHash(a.task), a.hash);
  const elsewhere = join(mkdtempSync(join(tmpdir(), "farm-copy-")), "nested");
  mkdirSync(elsewhere);
  copyFileSync(original, join(elsewhere, "classic_2048.textproto"));
  const copy = loadTaskFile(join(elsewhere, "classic_2048.textproto"));
  assert.notEqual(copy.sourcePath, a.sourcePath);
  assert.equal(copy.hash, a.hash); // APK paths enter the hash as written, not as resolved
  // Comments and layout are not content.
  const reformatted = join(elsewhere, "reformatted.textproto");
  writeFileSync(reformatted, `# a new comment\n\n${readFileSync(original, "utf8")}`);
  assert.equal(loadTaskFile(reformatted).hash, a.hash);
});

test("the hash changes when a field changes", () => {
  const dir = mkdtempSync(join(tmpdir(), "farm-hash-"));
  const text = readFileSync(join(tasksDir, "catch_the_ball.textproto"), "utf8");
  writeFileSync(join(dir, "catch_the_ball.textproto"), text);
  const base = loadTaskFile(join(dir, "catch_the_ball.textproto")).hash;
  writeFileSync(join(dir, "catch_the_ball.textproto"), text.replace("max_episode_steps: 1000", "max_episode_steps: 999"));
  assert.notEqual(loadTaskFile(join(dir, "catch_the_ball.textproto")).hash, base);
  writeFileSync(join(dir, "catch_the_ball.textproto"), text.replace('"^episode[ _]end$"', '"^episode end$"'));
  assert.notEqual(loadTaskFile(join(dir, "catch_the_ball.textproto")).hash, base);
});

test("the project's own tasks load, in the intended dialects, and their APK paths resolve", () => {
  const { tasks: all, errors } = loadTaskSet([tasksDir]);
  assert.deepEqual(errors, []);
  const tasks = all.filter((t) => !t.family); // families (tasks/families/): test/family.test.ts
  const byId = new Map(tasks.map((t) => [t.task.id, t]));
  assert.deepEqual([...byId.keys()].sort(), ["catch_the_ball", "classic_2048", "classic_2048_heavy_reset", "settings_app", "settings_font_size_large", "settings_turn_on_wifi", "sim_notes", "sim_notes_pinned", "todo_app", "todo_check_item", "todo_create_note"]);
  assert.equal(byId.get("classic_2048")!.dialect, "seed-2021");
  for (const id of ["catch_the_ball", "sim_notes", "sim_notes_pinned"]) assert.equal(byId.get(id)!.dialect, "current");
  const pinned = (id: string): boolean => byId.get(id)!.task.resetSteps.some((s) => s.action?.kind === "adb" && s.action.request.cmd.command === "start_screen_pinning");
  assert.ok(pinned("sim_notes_pinned") && !pinned("sim_notes"));
  assert.ok(byId.get("sim_notes")!.task.expectedAppScreen && !byId.get("sim_notes_pinned")!.task.expectedAppScreen);
  for (const t of tasks) {
    assert.deepEqual(t.warnings, [], t.task.id);
    assert.ok(t.task.maxEpisodeSteps > 0 && t.task.maxEpisodeSec > 0, t.task.id);
    if (t.task.id === "settings_app") continue; // Android's Settings, a system app: nothing to install
    const install = t.task.setupSteps[0]?.action;
    assert.ok(install?.kind === "adb" && install.request.cmd.command === "install_apk", t.task.id);
    const location = install.request.cmd.location;
    assert.ok(location.kind === "filesystem" && location.declaredPath.startsWith("apks/"));
    assert.equal(resolveApk(location, []), join(tasksDir, location.declaredPath));
  }
});

test("findApk: a filesystem APK missing at its resolved path is found by name in an APK folder; otherwise undefined", () => {
  const dir = mkdtempSync(join(tmpdir(), "farm-apkdir-"));
  writeFileSync(join(dir, "app.apk"), "x");
  const location = { kind: "filesystem" as const, path: join(dir, "elsewhere", "app.apk"), declaredPath: "elsewhere/app.apk" };
  assert.equal(findApk(location, []), undefined);
  assert.throws(() => resolveApk(location, []), /APK not found/);
  assert.equal(findApk(location, [dir]), join(dir, "app.apk"));
  assert.equal(resolveApk(location, [dir]), join(dir, "app.apk"));
  assert.equal(findApk({ ...location, path: "", declaredPath: "" }, [dir]), undefined);
});
