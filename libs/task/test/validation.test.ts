import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { formatTaskError, loadTaskSet, parseTaskText } from "../src/index.ts";
import { loadError, parse } from "./helpers.ts";

const lines = (...l: string[]): string => l.join("\n");
const ACTIVITY = "com.example.app/com.example.app.MainActivity";

/** A valid current-dialect task whose reset steps are `steps` (starting on line 3). */
const withResetSteps = (...steps: string[]): string => lines('id: "t"', "reset_steps: [", ...steps, "]");

test("a valid current-dialect task loads", () => {
  const loaded = parse(withResetSteps(`  { adb_request: { force_stop: { package_name: "com.example.app" } } }`));
  assert.equal(loaded.dialect, "current");
  assert.equal(loaded.task.resetSteps.length, 1);
  assert.equal(loaded.task.resetSteps[0]!.line, 3);
});

test("unknown field: line, field path and the fields that exist", () => {
  const e = loadError(withResetSteps("  {", "    adb_request: {", `      start_activty: { full_activity: "${ACTIVITY}" }`, "    }", "  }"));
  assert.equal(e.code, "unknown_field");
  assert.equal(e.line, 5);
  assert.equal(e.field, "reset_steps[0].adb_request.start_activty");
  assert.match(e.hint, /start_activity/);
});

test("unknown top-level field in a seed-dialect file", () => {
  const e = loadError(lines('id: "t"', 'package_name: "com.example.app"', "max_duration_steps: 10"));
  assert.equal(e.code, "unknown_field");
  assert.equal(e.line, 3);
  assert.equal(e.field, "max_duration_steps");
});

test("a step with neither command nor check", () => {
  const e = loadError(withResetSteps(`  { adb_request: { force_stop: { package_name: "com.example.app" } } },`, "  { }"));
  assert.equal(e.code, "empty_step");
  assert.equal(e.line, 4);
  assert.equal(e.field, "reset_steps[1]");
});

test("an adb_request without a command", () => {
  const e = loadError(withResetSteps("  { adb_request: { timeout_sec: 5 } }"));
  assert.equal(e.code, "empty_command");
  assert.equal(e.line, 3);
  assert.equal(e.field, "reset_steps[0].adb_request");
});

test("negative timeouts", () => {
  const e = loadError(withResetSteps("  {", `    adb_request: { force_stop: { package_name: "com.example.app" } }`, "    success_condition: {", "      check_install: {", '        package_name: "com.example.app"', "        timeout_sec: -1", "      }", "    }", "  }"));
  assert.equal(e.code, "negative_timeout");
  assert.equal(e.line, 8);
  assert.equal(e.field, "reset_steps[0].success_condition.check_install.timeout_sec");
  const e2 = loadError(withResetSteps(`  { adb_request: { force_stop: { package_name: "com.example.app" } }`, "    # per-request deadline", "    adb_request: {} }"));
  assert.equal(e2.code, "syntax"); // a oneof member twice is a parse error placed at the second one
  assert.equal(e2.line, 5);
  const e3 = loadError(withResetSteps(`  { adb_request: { force_stop: { package_name: "com.example.app" } timeout_sec: -2 } }`));
  assert.equal(e3.code, "negative_timeout");
  assert.equal(e3.field, "reset_steps[0].adb_request.timeout_sec");
  assert.equal(e3.line, 3);
});

test("zero (or missing) wait timeouts and empty wait activities are rejected", () => {
  const zero = loadError(withResetSteps("  {", "    success_condition: {", `      wait_for_app_screen: { app_screen: { activity: "${ACTIVITY}" } }`, "    }", "  }"));
  assert.equal(zero.code, "zero_timeout");
  assert.equal(zero.line, 5);
  // The missing field is named; its line is that of the closest field written.
  assert.equal(zero.field, "reset_steps[0].success_condition.wait_for_app_screen.timeout_sec");
  const empty = loadError(withResetSteps("  {", "    success_condition: {", "      wait_for_app_screen: {", '        app_screen: { activity: "" }', "        timeout_sec: 5", "      }", "    }", "  }"));
  assert.equal(empty.code, "empty_activity");
  assert.equal(empty.line, 6);
  assert.equal(empty.field, "reset_steps[0].success_condition.wait_for_app_screen.app_screen.activity");
});

test("malformed activity names", () => {
  for (const bad of ["com.example.app", "com.example.app/MainActivity", "app/.Main", "com.example.app/com..Main"]) {
    const e = loadError(withResetSteps("  {", "    adb_request: {", `      start_activity: { full_activity: "${bad}" }`, "    }", "  }"));
    assert.equal(e.code, "bad_activity", bad);
    assert.equal(e.line, 5);
    assert.equal(e.field, "reset_steps[0].adb_request.start_activity.full_activity");
  }
  const ok = parse(withResetSteps(`  { adb_request: { start_activity: { full_activity: "com.example.app/.MainActivity" } } }`));
  assert.equal(ok.task.resetSteps.length, 1);
});

test("package names that are not package names", () => {
  const e = loadError(withResetSteps(`  { adb_request: { force_stop: { package_name: "com.example.app" } } },`, `  { adb_request: { uninstall_package: { package_name: "not a package" } } }`));
  assert.equal(e.code, "bad_package");
  assert.equal(e.line, 4);
  assert.equal(e.field, "reset_steps[1].adb_request.uninstall_package.package_name");
  const top = loadError(lines('id: "t"', 'package_name: "2048"'));
  assert.equal(top.code, "bad_package");
  assert.equal(top.line, 2);
  assert.equal(top.field, "package_name");
});

test("regexes that do not compile or cannot be converted", () => {
  const text = lines('id: "t"', "log_parsing_config: {", '  filters: ["AndroidRLTask:V"]', "  log_regexps: {", '    reward: "^[Rr]eward: (.*)$"', '    reward: "(?i)reward: (.*)"', "  }", "}");
  const e = loadError(text);
  assert.equal(e.code, "bad_regex");
  assert.equal(e.line, 6);
  assert.equal(e.field, "log_parsing_config.log_regexps.reward[1]");
  assert.match(e.detail, /inline flags/);
  const vh = loadError(lines('id: "t"', "expected_app_screen: {", `  activity: "${ACTIVITY}"`, '  view_hierarchy_path: "^ok$"', '  view_hierarchy_path: "^(unclosed"', "}"));
  assert.equal(vh.code, "bad_regex");
  assert.equal(vh.line, 5);
  assert.equal(vh.field, "expected_app_screen.view_hierarchy_path[1]");
});

test("extras_spec entries with a bad dtype or shape", () => {
  const dtype = loadError(lines('id: "t"', "extras_spec: [", '  { name: "grid" shape: [4, 4] dtype: INT32 },', '  { name: "dir" shape: [1] }', "]"));
  assert.equal(dtype.code, "bad_dtype");
  assert.equal(dtype.line, 4);
  assert.equal(dtype.field, "extras_spec[1].dtype");
  const shape = loadError(lines('id: "t"', "extras_spec: [", '  { name: "grid"', "    shape: [4, -4]", "    dtype: INT32 }", "]"));
  assert.equal(shape.code, "bad_shape");
  assert.equal(shape.line, 4);
  assert.equal(shape.field, "extras_spec[0].shape[1]");
  const unknownDtype = loadError(lines('id: "t"', "extras_spec: [", '  { name: "g" shape: [1] dtype: INT33 }', "]"));
  assert.equal(unknownDtype.line, 3);
});

test("legacy SetupStep.tap is rejected", () => {
  const e = loadError(lines('id: "t"', 'package_name: "com.example.app"', "reset_steps: [", "  { tap: { x: 0.5 y: 0.5 } }", "]"));
  assert.equal(e.code, "tap_step");
  assert.equal(e.line, 4);
  assert.equal(e.field, "reset_steps[0].tap");
});

test("settings without a namespace", () => {
  const e = loadError(withResetSteps(`  { adb_request: { settings: { put: { key: "user_rotation" value: "0" } } } }`));
  assert.equal(e.code, "bad_settings");
  assert.equal(e.field, "reset_steps[0].adb_request.settings.name_space");
  assert.equal(e.line, 3);
});

test("old and new limit names both set", () => {
  const e = loadError(lines('id: "t"', 'package_name: "com.example.app"', "max_num_steps: 500", "max_episode_steps: 500"));
  assert.equal(e.code, "conflicting_limits");
  assert.equal(e.line, 4);
  assert.equal(e.field, "max_episode_steps");
  // One of each kind is fine: the docs' last example mixes adb_call with max_episode_steps.
  const ok = parse(lines('id: "t"', 'package_name: "com.example.app"', "max_duration_sec: 60", "max_episode_steps: 500"));
  assert.equal(ok.task.maxEpisodeSteps, 500);
  assert.equal(ok.task.maxEpisodeSec, 60);
});

test("early-2021 fields mixed with fields that dialect lacks", () => {
  const e = loadError(lines('id: "t"', 'log_tag: "Vokram"', "max_num_steps: 10"));
  assert.equal(e.code, "mixed_dialect");
  assert.equal(e.line, 3);
  assert.equal(e.field, "max_num_steps");
});

test("duplicate ids in one task set; formatTaskError", () => {
  const dir = mkdtempSync(join(tmpdir(), "farm-task-dup-"));
  writeFileSync(join(dir, "a.textproto"), 'id: "same"\n');
  writeFileSync(join(dir, "b.textproto"), '# another\nid: "same"\n');
  writeFileSync(join(dir, "same.textproto"), "max_episode_steps: 3\n");
  const { tasks, errors } = loadTaskSet([dir]);
  assert.equal(tasks.length, 1);
  assert.equal(errors.length, 2);
  assert.equal(errors[0]!.code, "duplicate_id");
  assert.equal(errors[0]!.line, 2);
  assert.equal(errors[1]!.code, "duplicate_id"); // id derived from the file name "same"
  assert.match(formatTaskError(errors[0]!), /b\.textproto:2: id: task id "same" is already used by .*a\.textproto \(give each task/);
});

test("a dialect named by the caller (task registry) wins over detection", () => {
  const text = lines('id: "t"', "reset_steps: [ { sleep: { time_sec: 1 } } ]");
  assert.equal(parse(text).dialect, "current");
  const seed = parseTaskText(text, { sourcePath: "/tmp/farm-task-tests/t.textproto", dialect: "seed-2021" });
  assert.equal(seed.dialect, "seed-2021");
  assert.throws(() => parseTaskText(lines('id: "t"', "max_num_steps: 3"), { sourcePath: "/tmp/x.textproto", dialect: "current" }), /unknown field 'max_num_steps'/);
});
