import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { formatTaskError, loadTaskSet, parseTaskText } from "../src/index.ts";
import { corpus } from "./helpers.ts";

test("all 160 early-2021 internal files load as dialect (b)", () => {
  const { tasks, errors } = loadTaskSet([join(corpus, "androidenv-2021-internal")]);
  assert.deepEqual(errors.map(formatTaskError), []);
  assert.equal(tasks.length, 160);
  // debug_task and device_control also parse against the 2021 public schema, but carry the google3 header.
  assert.ok(tasks.every((t) => t.dialect === "internal-2021"));
});

test("all 131 B-MoCA files load as the current dialect, ids from file names", () => {
  const { tasks, errors } = loadTaskSet([join(corpus, "bmoca-current")]);
  assert.deepEqual(errors.map(formatTaskError), []);
  assert.equal(tasks.length, 131);
  assert.ok(tasks.every((t) => t.dialect === "current"));
  assert.ok(tasks.some((t) => t.task.id === "calculator_001"));
});

test("the seed-doc example is invalid at line 14 (the unquoted path) and nowhere else", () => {
  const { tasks, errors } = loadTaskSet([join(corpus, "seed-doc")]);
  assert.equal(tasks.length, 0);
  assert.equal(errors.length, 1);
  const [e] = errors;
  assert.equal(e!.line, 14);
  assert.equal(e!.code, "syntax");
  assert.equal(e!.field, "setup_steps[0].adb_call.install_apk.filesystem.path");
  assert.match(formatTaskError(e!), /classic_2048\.textproto:14: setup_steps\[0\]\.adb_call\.install_apk\.filesystem\.path: expected string \(quote string values/);
});

test("with its path quoted, the seed-doc example loads: line 14 is its only problem", () => {
  const file = join(corpus, "seed-doc", "classic_2048.textproto");
  const fixed = readFileSync(file, "utf8").replace("path: path/to/classic_2048.apk", 'path: "path/to/classic_2048.apk"');
  const loaded = parseTaskText(fixed, { sourcePath: file });
  assert.equal(loaded.dialect, "seed-2021");
  assert.equal(loaded.task.maxEpisodeSteps, 500);
  assert.equal(loaded.task.logParsing.extra[0]?.source, "^extra: (?P<name>[^ ]*)[ ]?(?P<extra>.*)$");
  // The only warning is that this example APK does not exist here.
  assert.deepEqual(loaded.warnings.map((w) => w.line), [14]);
});

test("loading all 291 corpus files takes well under a second of CPU", (t) => {
  // CPU time, not wall time: on a shared, loaded machine the wall clock measures the neighbours (the load is
  // synchronous, so this process's CPU time is the work itself).
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  const { tasks } = loadTaskSet([join(corpus, "androidenv-2021-internal"), join(corpus, "bmoca-current")]);
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  t.diagnostic(`loaded ${tasks.length} corpus files in ${cpuMs.toFixed(0)} ms CPU (${(performance.now() - started).toFixed(0)} ms wall)`);
  assert.equal(tasks.length, 291);
  assert.ok(cpuMs < 1000, `took ${cpuMs} ms of CPU`);
});
