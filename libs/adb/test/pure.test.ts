/** Pure parts of the driver, fed with real device output strings. */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  buildDumpTree, findPinnableTask, framebufferToRgba, matchViewHierarchy, parseCurrentActivity, parseLogcatLine,
  parseOrientation, parsePmList, parseWmSize, quoteExtraArgs, checkActivity, checkPackage, logcatCommandLine, resolveConfig,
} from "@farm/adb/testing";
import { pyRegex } from "@farm/task";
import { shQuote, shSplit } from "@farm/shell-words";
import { parseResumedActivity, stackListUnavailable, visibleLines } from "../src/parsers.ts";
import { describeError } from "../src/result.ts";

test("shQuote: safe words stay, everything else is one single-quoted argument", () => {
  assert.equal(shQuote("com.example.app/.Main"), "com.example.app/.Main");
  assert.equal(shQuote(""), "''");
  assert.equal(shQuote("com.x; rm -rf /"), "'com.x; rm -rf /'");
  assert.equal(shQuote("it's"), "'it'\\''s'");
  assert.equal(shQuote("$(touch /x)"), "'$(touch /x)'");
  // Round trip through the splitter (what a POSIX shell does with the quoted word).
  for (const v of ["a b", "it's", "`id`", "$(x)", "a\"b", "\\n", "x'\"'y", "*:S", "a\nb"]) assert.deepEqual(shSplit(shQuote(v)), [v]);
});

test("shSplit: quote removal without expansion or operators", () => {
  assert.deepEqual(shSplit(`--ez '"RL_TASK_ENABLED"' '"true"'`), ["--ez", '"RL_TASK_ENABLED"', '"true"']);
  assert.deepEqual(shSplit(`--ez "RL_TASK_ENABLED" "true"`), ["--ez", "RL_TASK_ENABLED", "true"]);
  assert.deepEqual(shSplit(`a;b | c $(d) \`e\``), ["a;b", "|", "c", "$(d)", "`e`"]);
  assert.deepEqual(shSplit(`x\\ y "a\\"b" 'c\\d' ''`), ["x y", 'a"b', "c\\d", ""]);
  assert.deepEqual(shSplit(`"a\\$b\\x"`), ["a$b\\x"]);
  assert.throws(() => shSplit(`'open`), /unterminated single quote/);
  assert.throws(() => shSplit(`"open`), /unterminated double quote/);
});

test("quoteExtraArgs: AndroidEnv forms arrive as AndroidEnv delivers them", () => {
  // As written in task files (textproto strings already unescaped by the loader).
  const args = ["--ez", '"RL_TASK_ENABLED"', '"true"', "--es", '"RL_TASK_GAME_CONFIG"', '"{}"'];
  assert.deepEqual(quoteExtraArgs(args).words, ["--ez", "RL_TASK_ENABLED", "true", "--es", "RL_TASK_GAME_CONFIG", "{}"]);
  // mdp_0000: adjacent textproto strings joined into one argument (task-format.md §8.1).
  const mdp = '"{""\\"initialSeed\\":-1,""\\"states\\":[0,1],""\\"name\\":\\"a b\\"""}"';
  const q = quoteExtraArgs(["--es", '"RL_TASK_GAME_CONFIG"', mdp]);
  assert.deepEqual(q.words, ["--es", "RL_TASK_GAME_CONFIG", '{"initialSeed":-1,"states":[0,1],"name":"a b"}']);
  assert.deepEqual(JSON.parse(q.words[2]!), { initialSeed: -1, states: [0, 1], name: "a b" });
  // What the device shell gets splits back to the same words.
  assert.deepEqual(shSplit(q.commandLine), q.words);
  // Operators never act: they become (parts of) arguments.
  const evil = quoteExtraArgs(["--es", "k", "v; touch /sdcard/pwned", "$(reboot)", "`id`", "|", "log", "x"]);
  assert.deepEqual(evil.words, ["--es", "k", "v;", "touch", "/sdcard/pwned", "$(reboot)", "`id`", "|", "log", "x"]);
  assert.ok(evil.commandLine.includes("'v;'") && evil.commandLine.includes("'$(reboot)'") && evil.commandLine.includes("'|'"));
});

test("validation of packages and activities", () => {
  assert.equal(checkPackage("com.tpcstld.twozerogame"), undefined);
  assert.match(checkPackage("com.x; rm -rf /")!, /invalid package/);
  assert.match(checkPackage("")!, /empty/);
  assert.equal(checkActivity("com.example.catchtheball/com.example.catchtheball.MainActivity"), undefined);
  assert.equal(checkActivity("com.a/.Main$Inner"), undefined);
  assert.match(checkActivity("com.a/$(touch x)")!, /bad class/);
  assert.match(checkActivity("com.a")!, /expected pkg/);
});

test("pm list parsing", () => {
  const out = "package:com.android.settings\npackage:com.tpcstld.twozerogame\r\n\npackage:com.farm.simapps.notes\n";
  assert.deepEqual(parsePmList(out, "package:"), ["com.android.settings", "com.tpcstld.twozerogame", "com.farm.simapps.notes"]);
  assert.deepEqual(parsePmList("feature:reqGlEsVersion=0x30000\nfeature:android.hardware.touchscreen\n", "feature:"), ["reqGlEsVersion=0x30000", "android.hardware.touchscreen"]);
});

const STACK_LIST = [
  "Stack id=0 bounds=[0,0][1080,1920] displayId=0 userId=0",
  "  configuration={1.0 ?mcc?mnc [en_US] ldltr sw411dp w411dp h659dp 420dpi nrml port finger qwerty/v/v -nav/h winConfig={ mBounds=Rect(0, 0 - 1080, 1920)} s.6}",
  "  taskId=1: com.google.android.apps.nexuslauncher/.NexusLauncherActivity bounds=[0,0][1080,1920] userId=0 visible=false topActivity=ComponentInfo{com.google.android.apps.nexuslauncher/com.google.android.apps.nexuslauncher.NexusLauncherActivity}",
  "Stack id=3 bounds=[0,0][1080,1920] displayId=0 userId=0",
  "  taskId=12: com.tpcstld.twozerogame/.MainActivity bounds=[0,0][1080,1920] userId=0 visible=true topActivity=ComponentInfo{com.tpcstld.twozerogame/com.tpcstld.twozerogame.MainActivity}",
].join("\n");

test("current activity: last {…} on the visible line", () => {
  const vis = visibleLines(STACK_LIST).join("\n");
  assert.equal(parseCurrentActivity(vis), "com.tpcstld.twozerogame/com.tpcstld.twozerogame.MainActivity");
  assert.equal(parseCurrentActivity(""), undefined);
  assert.equal(parseCurrentActivity("taskId=3: no braces visible=true"), undefined);
});

test("screen pinning: base or top activity, the §8.4 fixture line", () => {
  const fixture = "  taskId=12345: my.project.MainActivity visible=true  topActivity=ComponentInfo{my.project.TopActivity}";
  assert.equal(findPinnableTask(fixture, "my.project.MainActivity"), "12345");
  assert.equal(findPinnableTask(fixture, "my.project.TopActivity"), "12345");
  assert.equal(findPinnableTask(fixture, "my.project.Other"), undefined);
  assert.equal(findPinnableTask(STACK_LIST, "com.tpcstld.twozerogame/com.tpcstld.twozerogame.MainActivity"), "12");
  assert.equal(findPinnableTask(STACK_LIST, "com.tpcstld.twozerogame/.MainActivity"), "12");
  // Invisible tasks are never pinned.
  assert.equal(findPinnableTask(STACK_LIST, "com.google.android.apps.nexuslauncher/.NexusLauncherActivity"), undefined);
});

test("orientation from dumpsys input, skipping invalid input devices", () => {
  assert.equal(parseOrientation(" SurfaceOrientation: 0"), 0);
  const out = [
    "Input Reader State:",
    "  Device 3: virtio_input_multi_touch_1",
    "      PhysicalWidth: -1px",
    "      SurfaceOrientation: 3",
    "  Device 4: virtio_input_multi_touch_2",
    "      PhysicalWidth: 1080px",
    "      SurfaceOrientation: 1",
  ].join("\n");
  assert.equal(parseOrientation(out), 1);
  assert.equal(parseOrientation("    InputDeviceOrientation: 2\n"), 2);
  assert.equal(parseOrientation("nothing here"), undefined);
});

test("wm size", () => {
  assert.deepEqual(parseWmSize("Physical size: 1080x1920\n"), { width: 1080, height: 1920 });
  assert.deepEqual(parseWmSize("Physical size: 1080x1920\nOverride size: 720x1280\n"), { width: 720, height: 1280 });
  assert.equal(parseWmSize("garbage"), undefined);
});

test("logcat -v epoch lines", () => {
  assert.deepEqual(parseLogcatLine("         1553110400.424  5583  5658 D Tag: reward: 1.0"), {
    timestampSec: 1553110400.424, pid: 5583, tid: 5658, priority: "D", tag: "Tag", message: "reward: 1.0",
  });
  assert.deepEqual(parseLogcatLine("  1700000000.000001   12   13 I AndroidRLTask  : extra: grid [[0,2],[4,8]]\r"), {
    timestampSec: 1700000000.000001, pid: 12, tid: 13, priority: "I", tag: "AndroidRLTask", message: "extra: grid [[0,2],[4,8]]",
  });
  assert.equal(parseLogcatLine("1553110400.424  5583  5658 D Tag: no leading space")?.message, undefined);
  assert.equal(parseLogcatLine("--------- beginning of main"), undefined);
  assert.equal(parseLogcatLine(" 1.5 1 1 I Tag:  two spaces")?.message, " two spaces");
  assert.equal(logcatCommandLine(["AndroidRLTask:V", "Vokram:V"]), "logcat -v epoch AndroidRLTask:V Vokram:V '*:S'");
});

// A `dumpsys activity <pkg> <pkg>` shaped like a real device's.
const DUMP = [
  "TASK com.example.app id=17 userId=0",
  "  ACTIVITY com.example.app/.MainActivity 5f2b1c pid=4242",
  "    Local Activity 8c1a2e State:",
  "      mResumed=true mStopped=false mFinished=false",
  "    View Hierarchy:",
  "      DecorView@1c7f0ab[MainActivity]",
  "        android.widget.LinearLayout{a2b3c4d V.E...... ........ 0,0-1080,1920}",
  "          android.view.ViewStub{e5f6a7b G.E...... ......I. 0,0-0,0 #10203a0 android:id/action_mode_bar_stub}",
  "          android.widget.FrameLayout{c8d9e0f V.E...... ........ 0,63-1080,1920 #1020002 android:id/content}",
  "            com.example.app.GameView{1a2b3c4 VFED..... ........ 0,0-1080,1857 #7f080001 app:id/game}",
  "    Looper (main, tid 1) {4d5e6f7}",
].join("\n");

test("app-screen: view hierarchy path over dumpsys activity", () => {
  const ok = [/* DecorView */ "^DecorView@.*\\[MainActivity\\]$", "^android.widget.LinearLayout\\{.*\\}$", "^android.widget.FrameLayout\\{.*\\}$", "^com.example.app.GameView"].map(pyRegex);
  assert.equal(matchViewHierarchy(DUMP, ok), "SUCCESS");
  // Python-style escapes such as \: and \/ in archived regexes compile without the u flag.
  assert.equal(matchViewHierarchy(DUMP, [pyRegex("DecorView@.*\\[Main"), pyRegex("android\\.widget\\.LinearLayout")]), "SUCCESS");
  // First matching direct child only; no backtracking into siblings.
  assert.equal(matchViewHierarchy(DUMP, [pyRegex("^DecorView"), pyRegex("^android.widget.LinearLayout"), pyRegex("^com.example.app.GameView")]), "UNEXPECTED_VIEW_HIERARCHY");
  assert.equal(matchViewHierarchy(DUMP, [pyRegex("^DecorView@.*\\[OtherActivity\\]$")]), "UNEXPECTED_VIEW_HIERARCHY");
  // Empty output counts as success (upstream), no View Hierarchy node does not.
  assert.equal(matchViewHierarchy("", ok), "SUCCESS");
  assert.equal(matchViewHierarchy("TASK x\n  ACTIVITY y\n", ok), "UNEXPECTED_VIEW_HIERARCHY");
  // Empty regexes never match.
  assert.equal(matchViewHierarchy(DUMP, [pyRegex("")]), "UNEXPECTED_VIEW_HIERARCHY");
});

test("app-screen: tree building and the depth budget", () => {
  const root = buildDumpTree("a\n  b\n    c\n   d\n e\n\n  \nf\r");
  assert.deepEqual(root.children.map((c) => c.text), ["a", "e", "f"]);
  // k = floor(3 / 2) = 1: "d" hangs under stack[1] = "a", next to "b".
  assert.deepEqual(root.children[0]!.children.map((c) => c.text), ["b", "d"]);
  assert.deepEqual(root.children[0]!.children[0]!.children.map((c) => c.text), ["c"]);
  // "View Hierarchy" 4 levels below the root is found, 5 levels is not.
  const at = (depth: number) => Array.from({ length: depth }, (_, i) => `${"  ".repeat(i)}n${i}`).join("\n") + `\n${"  ".repeat(depth)}View Hierarchy:\n${"  ".repeat(depth + 1)}DecorView@1[X]`;
  assert.equal(matchViewHierarchy(at(3), [pyRegex("DecorView")]), "SUCCESS");
  assert.equal(matchViewHierarchy(at(4), [pyRegex("DecorView")]), "UNEXPECTED_VIEW_HIERARCHY");
});

test("framebuffer conversion", () => {
  const meta = { bpp: 32, size: 8, width: 2, height: 1, red_offset: 0, red_length: 8, green_offset: 8, green_length: 8, blue_offset: 16, blue_length: 8, alpha_offset: 24, alpha_length: 8 };
  const shot = framebufferToRgba(meta, new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]));
  assert.ok(typeof shot !== "string");
  assert.deepEqual([...shot.rgba], [1, 2, 3, 4, 5, 6, 7, 8]);
  const bgr = framebufferToRgba({ ...meta, bpp: 24, size: 6, red_offset: 16, blue_offset: 0, alpha_length: 0 }, new Uint8Array([1, 2, 3, 4, 5, 6]));
  assert.ok(typeof bgr !== "string");
  assert.deepEqual([...bgr.rgba], [3, 2, 1, 255, 6, 5, 4, 255]);
  assert.match(framebufferToRgba(meta, new Uint8Array(3)) as string, /short/);
});

test("config validation and error messages", () => {
  const c = resolveConfig({ port: 15037 });
  assert.equal(c.host, "127.0.0.1");
  assert.equal(c.defaultTimeoutMs, 120000);
  assert.throws(() => resolveConfig({ port: 0 }), /port/);
  assert.throws(() => resolveConfig({ defaultTimeoutMs: 1.5 }), /defaultTimeoutMs/);
  const ctx = { serial: "emulator-5560", host: "127.0.0.1", port: 15037 };
  assert.deepEqual(describeError(new Error("device 'emulator-5560' not found"), ctx), { status: "adb_error", message: "device 'emulator-5560' not found on adb server 127.0.0.1:15037" });
  assert.match(describeError(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), ctx).message, /no adb server answers/);
});

test("current activity fallback: dumpsys activity activities", () => {
  assert.equal(parseResumedActivity("  mResumedActivity: ActivityRecord{3f5a2c1 u0 com.tpcstld.twozerogame/.MainActivity t12}\n"), "com.tpcstld.twozerogame/com.tpcstld.twozerogame.MainActivity");
  assert.equal(parseResumedActivity("    topResumedActivity=ActivityRecord{a1 u0 com.a/com.b.Main t3}"), "com.a/com.b.Main");
  assert.equal(parseResumedActivity("mResumedActivity: null"), undefined);
  assert.equal(stackListUnavailable("Unknown command: stack\n"), true);
  assert.equal(stackListUnavailable(STACK_LIST), false);
});

test("action channel seam: a custom transport replaces the shell stream; a failing one falls back", async () => {
  const { AdbDriver } = await import("@farm/adb");
  const { ShellActionChannel } = await import("@farm/adb/testing");
  const { freePort } = await import("@farm/local-services");
  const calls: string[] = [];
  const r = { status: "ok" as const, message: "", output: "", durationMs: 0 };
  const fake = {
    touchDown: async (_x: number, _y: number) => (calls.push("down"), r),
    touchMove: async () => (calls.push("move"), r),
    touchUp: async () => (calls.push("up"), r),
    tap: async () => (calls.push("tap"), r),
    swipe: async () => (calls.push("swipe"), r),
    keyEvent: async () => (calls.push("key"), r),
    keyEvents: async () => (calls.push("keys"), r),
    text: async () => (calls.push("text"), r),
    close: async () => undefined,
  };
  const port = await freePort();
  const d1 = new AdbDriver({ port, actionChannelFactory: async () => fake });
  const ch = await d1.device("emulator-7000").openActionChannel();
  assert.equal(ch, fake);
  await ch.touchDown(1, 2);
  assert.deepEqual(calls, ["down"]);
  const d2 = new AdbDriver({ port, actionTimeoutMs: 500, actionChannelFactory: async () => { throw new Error("grpc endpoint down"); } });
  const ch2 = await d2.device("emulator-7000").openActionChannel();
  assert.ok(ch2 instanceof ShellActionChannel);
  const res = await ch2.tap(1, 1);
  assert.equal(res.status, "adb_error"); // nothing listens on the port: data, not a throw
  await ch2.close();
});
