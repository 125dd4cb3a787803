import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { loadTaskFile, type AdbCommand, type SetupStep } from "../src/index.ts";
import { resolveApk } from "@farm/task/testing";
import { corpus, parse } from "./helpers.ts";

const lines = (...l: string[]): string => l.join("\n");
const cmds = (steps: SetupStep[]): AdbCommand[] => steps.map((s) => (s.action?.kind === "adb" ? s.action.request.cmd : undefined)).filter((c) => c !== undefined);

test("unknown escapes are read as Python reads them, with a warning", () => {
  const loaded = parse(
    lines(
      "log_parsing_config: {",
      '  filters: ["AlarmClock:I"]',
      "  log_regexps: {",
      "    # comments are left alone: \\[ here is not in a string",
      '    reward_event: { event: "^(.*?)Events: \\[Alarm\\] \\[Show Tab\\]" reward: 1 }',
      "  }",
      "}",
    ),
  );
  const [event] = loaded.task.logParsing.rewardEvent;
  assert.equal(event!.event.source, "^(.*?)Events: \\[Alarm\\] \\[Show Tab\\]");
  assert.ok(event!.event.test("12:00 Events: [Alarm] [Show Tab] [Tap]"));
  assert.ok(!event!.event.test("Events: Alarm Show Tab"));
  assert.deepEqual(
    loaded.warnings.map((w) => w.line),
    [5, 5, 5, 5],
  );
  assert.match(loaded.warnings[0]!.message, /unknown escape \\\[ read as Python does/);
});

test("the B-MoCA clock files that rely on lenient escapes load with the intended regex", () => {
  const loaded = loadTaskFile(join(corpus, "bmoca-current", "clock_045.textproto"));
  const event = loaded.task.logParsing.rewardEvent.find((e) => e.event.source.includes("Events"));
  assert.ok(event, "reward_event with the Events regex");
  assert.ok(event.event.source.includes("\\["));
  assert.ok(loaded.warnings.length > 0);
});

test("seed dialect: rotate, clear_cache, start_activity, disable_animations, start_intent → current commands", () => {
  const loaded = parse(
    lines(
      'id: "legacy"',
      'package_name: "com.example.app"',
      "setup_steps: [",
      "  { adb_call: { rotate: { orientation: LANDSCAPE_90 } } },",
      "  { adb_call: { disable_animations: {} } success_condition: { check_install: { package_name: \"com.example.app\" timeout_sec: 5 } } },",
      '  { adb_call: { start_accessibility_service: { full_service: "com.example.svc/com.example.svc.Forwarder" } } },',
      '  { adb_call: { grant_permissions: { package_name: "com.example.app" permissions: ["android.permission.WRITE_SECURE_SETTINGS"] } } }',
      "]",
      "reset_steps: [",
      '  { adb_call: { clear_cache: { package_name: "com.example.app" } } },',
      '  { adb_call: { start_activity: { full_activity: "com.example.app/.Main" extra_args: ["--ez", \'"RL_TASK_ENABLED"\', \'"true"\'] } } },',
      '  { adb_call: { start_intent: { action: "android.intent.action.VIEW" data_uri: "app://new" package_name: "com.example.app" } } },',
      '  { adb_call: { press_button: { button: BACK } } }',
      "]",
      "max_num_steps: 100",
    ),
  );
  assert.equal(loaded.dialect, "seed-2021");
  assert.equal(loaded.task.maxEpisodeSteps, 100);
  const setup = loaded.task.setupSteps;
  assert.deepEqual(cmds(setup), [
    { command: "settings", namespace: "system", action: { verb: "put", key: "user_rotation", value: "1" } },
    { command: "settings", namespace: "global", action: { verb: "put", key: "window_animation_scale", value: "0.0" } },
    { command: "settings", namespace: "global", action: { verb: "put", key: "transition_animation_scale", value: "0.0" } },
    { command: "settings", namespace: "global", action: { verb: "put", key: "animator_duration_scale", value: "0.0" } },
    { command: "settings", namespace: "secure", action: { verb: "put", key: "enabled_accessibility_services", value: "com.example.svc/com.example.svc.Forwarder" } },
    { command: "package_manager_grant", packageName: "com.example.app", permissions: ["android.permission.WRITE_SECURE_SETTINGS"] },
  ]);
  // disable_animations became three steps on its line; its check goes with the last one.
  assert.deepEqual(setup.slice(1, 4).map((s) => [s.line, s.successCondition?.check.kind]), [[5, undefined], [5, undefined], [5, "check_install"]]);
  assert.deepEqual(cmds(loaded.task.resetSteps), [
    { command: "package_manager_clear", packageName: "com.example.app", userId: "" },
    { command: "start_activity", fullActivity: "com.example.app/.Main", extraArgs: ["--ez", '"RL_TASK_ENABLED"', '"true"'], forceStop: true },
    { command: "generic", args: ["shell", "am", "start", "-a", "android.intent.action.VIEW", "-d", "app://new", "com.example.app"] },
    { command: "press_button", button: "BACK" },
  ]);
});

test("dialect (b): log_tag / log_prefix become log parsing with the fixed regexes and a message prefix", () => {
  const polytopia = loadTaskFile(join(corpus, "androidenv-2021-internal", "polytopia_default.textproto"));
  assert.equal(polytopia.dialect, "internal-2021");
  const lp = polytopia.task.logParsing;
  assert.deepEqual(lp.filters, ["AndroidRLTask:V", "Unity:V"]);
  assert.equal(lp.messagePrefix?.source, "AndroidRLTask:");
  assert.equal(lp.score?.source, "^[Ss]core: ([-+]?[0-9]*\\.?[0-9]*)$");
  assert.deepEqual(lp.extra.map((r) => r.source), ["^extra: (?P<name>[^ ]*) (?P<extra>.*)$"]);
  assert.deepEqual(lp.episodeEnd.map((r) => r.source), ["^episode end$"]);
  assert.deepEqual(lp.rewardEvent, []);
  assert.equal(polytopia.task.maxEpisodeSec, 600);
  // wait_for_message matched the whole message in that runtime.
  const wait = polytopia.task.resetSteps[0]!.successCondition!.check;
  assert.equal(wait.kind, "wait_for_message");
  if (wait.kind === "wait_for_message") {
    assert.ok(wait.message.test("ready"));
    assert.ok(!wait.message.test("ready now"));
  }
  // start_intent → generic
  assert.equal(cmds(polytopia.task.setupSteps)[1]?.command, "generic");

  // A log_tag that is not a tag (a sentence pasted by mistake) is dropped with a warning.
  const loopy = loadTaskFile(join(corpus, "androidenv-2021-internal", "sgtpuzzles_loopy_3x3_easy.textproto"));
  assert.deepEqual(loopy.task.logParsing.filters, ["AndroidRLTask:V"]);
  assert.ok(loopy.warnings.some((w) => w.field === "log_tag"));
});

test("mpm locations parse; running them fails with how to supply a local APK, unless an APK folder has the file", () => {
  const loaded = loadTaskFile(join(corpus, "androidenv-2021-internal", "classic_2048.textproto"));
  const install = cmds(loaded.task.setupSteps)[0];
  assert.equal(install?.command, "install_apk");
  if (install?.command !== "install_apk") return;
  assert.deepEqual(install.location, { kind: "mpm", packageName: "learning/deepmind/research/xgames/android/apks/classic_2048", label: "0.3", path: "2020.03.25-2048-debug.apk" });
  assert.throws(() => resolveApk(install.location, []), /mpm package store.*put a file named "2020\.03\.25-2048-debug\.apk" in an APK folder/s);
  const dir = mkdtempSync(join(tmpdir(), "farm-apks-"));
  writeFileSync(join(dir, "2020.03.25-2048-debug.apk"), "apk");
  assert.equal(resolveApk(install.location, [dir]), join(dir, "2020.03.25-2048-debug.apk"));
});

test("filesystem paths resolve against the task's folder, then the APK folders", () => {
  const taskDir = mkdtempSync(join(tmpdir(), "farm-task-"));
  const apkDir = mkdtempSync(join(tmpdir(), "farm-apkdir-"));
  writeFileSync(join(apkDir, "game.apk"), "apk");
  const text = lines('id: "fs"', 'setup_steps: [ { adb_request: { install_apk: { filesystem: { path: "apks/game.apk" } } } } ]');
  const file = join(taskDir, "fs.textproto");
  const missing = parse(text, file).task.setupSteps[0]!.action;
  assert.ok(missing?.kind === "adb" && missing.request.cmd.command === "install_apk");
  const withDir = parse(text, file, [apkDir]);
  const action = withDir.task.setupSteps[0]!.action;
  assert.ok(action?.kind === "adb" && action.request.cmd.command === "install_apk");
  assert.deepEqual(action.request.cmd.location, { kind: "filesystem", path: join(apkDir, "game.apk"), declaredPath: "apks/game.apk" });
  assert.equal(resolveApk(action.request.cmd.location, [apkDir]), join(apkDir, "game.apk"));
  const missingCmd = missing.request.cmd;
  if (missingCmd.command === "install_apk") assert.throws(() => resolveApk(missingCmd.location, []), /APK not found/);
});
