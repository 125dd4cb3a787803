/** The exact device command lines each step kind produces (task-format.md §8.2), with a recording fake context. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { AdbCommand } from "@farm/task";
import { stepHandlers, type StepCtx } from "../src/steps.ts";
import { resolveConfig } from "../src/config.ts";
import type { ShellResult, StepResult } from "../src/types.ts";

function fakeCtx(answers: Record<string, string> = {}): { ctx: StepCtx; lines: string[] } {
  const lines: string[] = [];
  const ctx = {
    dev: { client: undefined as never, cfg: resolveConfig(), serial: "emulator-9" },
    deadline: performance.now() + 1000,
    apkDirs: [],
    remainingMs: () => 1000,
    async sh(cl: string): Promise<ShellResult> {
      lines.push(cl);
      const key = Object.keys(answers).find((k) => cl.startsWith(k));
      return { status: "ok", message: "", stdout: key ? answers[key]! : "", durationMs: 0 };
    },
    async call() {
      throw new Error("no adbkit calls in this test");
    },
  } as unknown as StepCtx;
  return { ctx, lines };
}

async function linesOf(cmd: AdbCommand, answers?: Record<string, string>): Promise<{ lines: string[]; r: StepResult }> {
  const { ctx, lines } = fakeCtx(answers);
  const r = await (stepHandlers[cmd.command] as (c: AdbCommand, x: StepCtx) => Promise<StepResult>)(cmd, ctx);
  return { lines, r };
}

const dumpsys = (o: Partial<Extract<AdbCommand, { command: "dumpsys" }>["options"]>): AdbCommand => ({
  command: "dumpsys",
  options: { service: "", args: [], listOnly: false, timeoutSec: 0, timeoutMs: 0, proto: false, priority: "", skipServices: [], ...o },
});

test("command lines per step kind", async () => {
  const cases: Array<[AdbCommand, string[], Record<string, string>?]> = [
    [{ command: "start_activity", fullActivity: "com.a/.Main", extraArgs: [], forceStop: true }, ["am start -S -W -n com.a/.Main"]],
    [{ command: "start_activity", fullActivity: "com.a/com.a.Main", extraArgs: ["--ez", '"RL_TASK_ENABLED"', '"true"', "--es", "k", "'a b'"], forceStop: false }, ["am start -W -n com.a/com.a.Main --ez RL_TASK_ENABLED true --es k 'a b'"]],
    [{ command: "force_stop", packageName: "com.a" }, ["am force-stop com.a"]],
    [{ command: "tap", x: 10, y: 20 }, ["input tap 10 20"]],
    [{ command: "press_button", button: "ENTER" }, ["input keyevent KEYCODE_ENTER"]],
    [{ command: "input_text", text: "hi there" }, ["input text 'hi there'"]],
    [{ command: "settings", namespace: "system", action: { verb: "put", key: "user_rotation", value: "1" } }, ["settings put system user_rotation 1"]],
    [{ command: "settings", namespace: "secure", action: { verb: "reset", packageName: "", mode: "untrusted_clear" } }, ["settings reset secure untrusted_clear"]],
    [{ command: "settings", namespace: "global", action: { verb: "reset", packageName: "com.a", mode: "" } }, ["settings reset global com.a"]],
    [{ command: "settings", namespace: "global", action: { verb: "list" } }, ["settings list global"]],
    [{ command: "settings", namespace: "global", action: { verb: "delete", key: "k" } }, ["settings delete global k"]],
    [{ command: "package_manager_list", what: "libraries" }, ["pm list libraries"]],
    [{ command: "package_manager_clear", packageName: "com.a", userId: "10" }, ["pm clear -f 10 com.a"]],
    [{ command: "package_manager_grant", packageName: "com.a", permissions: ["p.A", "p.B"] }, ["pm grant com.a p.A", "pm grant com.a p.B"]],
    [{ command: "send_broadcast", action: "a.B", component: "com.a/.R" }, ["am broadcast -a a.B -n com.a/.R"]],
    [{ command: "get_orientation" }, ["dumpsys input"], { "dumpsys input": " SurfaceOrientation: 2\n" }],
    [{ command: "get_current_activity" }, ["am stack list"], { "am stack list": "  taskId=3: com.a/.M visible=true topActivity=ComponentInfo{com.a/com.a.M}\n" }],
    [{ command: "start_screen_pinning", fullActivity: "com.a/com.a.M" }, ["am stack list", "am task lock 3"], { "am stack list": "  taskId=3: com.a/.M bounds=[0,0][1,1] visible=true topActivity=ComponentInfo{com.a/com.a.M}\n" }],
    [{ command: "uninstall_package", packageName: "com.a" }, ["pm list packages", "pm uninstall com.a"], { "pm list packages": "package:com.a\n", "pm uninstall": "Success\n" }],
    [{ command: "uninstall_package", packageName: "com.gone" }, ["pm list packages"], { "pm list packages": "package:com.a\n" }],
    [{ command: "generic", args: ["shell", "am", "start", "-a", "A", "-d", "http://x/?a=1&b=2", "com.a"] }, ["am start -a A -d 'http://x/?a=1&b=2' com.a"]],
    [dumpsys({ service: "activity", args: ["com.a", "com.a"] }), ["dumpsys activity com.a com.a"]],
    [dumpsys({ listOnly: true, service: "x", args: ["y"], skipServices: ["z"], timeoutSec: 3 }), ["dumpsys -l -t 3"]],
    [dumpsys({ timeoutMs: 250, priority: "HIGH", skipServices: ["a", "b"], service: "x", proto: true }), ["dumpsys -T 250 --priority HIGH --skip a,b --proto"]],
  ];
  for (const [cmd, expected, answers] of cases) {
    const { lines, r } = await linesOf(cmd, answers);
    assert.deepEqual(lines, expected, JSON.stringify(cmd));
    assert.equal(r.status, "ok", `${JSON.stringify(cmd)}: ${r.message}`);
  }
});

test("parsed payloads and device-reported errors", async () => {
  let { r } = await linesOf({ command: "get_orientation" }, { "dumpsys input": " SurfaceOrientation: 2\n" });
  assert.deepEqual(r.data, { kind: "orientation", orientation: 2 });
  ({ r } = await linesOf({ command: "package_manager_list", what: "packages" }, { "pm list": "package:a.b\npackage:c.d\n" }));
  assert.deepEqual(r.data, { kind: "list", items: ["a.b", "c.d"] });
  ({ r } = await linesOf({ command: "start_activity", fullActivity: "com.a/.M", extraArgs: [], forceStop: false }, { "am start": "Starting: Intent { cmp=com.a/.M }\nError type 3\nError: Activity class {com.a/com.a.M} does not exist.\n" }));
  assert.equal(r.status, "internal_error");
  ({ r } = await linesOf({ command: "start_screen_pinning", fullActivity: "com.a/com.a.M" }, { "am stack list": "" }));
  assert.equal(r.status, "internal_error");
  ({ r } = await linesOf({ command: "get_current_activity" }, { "am stack list": "  taskId=3: com.a/.M visible=false\n" }));
  assert.equal(r.status, "internal_error");
  const fb = await linesOf({ command: "get_current_activity" }, { "am stack list": "Unknown command: stack\n", "dumpsys activity activities": "  mResumedActivity: ActivityRecord{1 u0 com.a/.M t4}\n" });
  assert.deepEqual(fb.lines, ["am stack list", "dumpsys activity activities"]);
  assert.deepEqual(fb.r.data, { kind: "current_activity", fullActivity: "com.a/com.a.M" });
  ({ r } = await linesOf({ command: "uninstall_package", packageName: "com.a" }, { "pm list packages": "package:com.a\n", "pm uninstall": "Failure [DELETE_FAILED_INTERNAL_ERROR]\n" }));
  assert.equal(r.status, "internal_error");
});

test("preconditions fail before any device command", async () => {
  const bad: AdbCommand[] = [
    { command: "start_activity", fullActivity: "", extraArgs: [], forceStop: false },
    { command: "start_activity", fullActivity: "com.a/.M", extraArgs: ["'unbalanced"], forceStop: false },
    { command: "force_stop", packageName: "" },
    { command: "force_stop", packageName: "com.x; reboot" },
    { command: "tap", x: -1, y: 0 },
    { command: "tap", x: 1.5, y: 0 },
    { command: "input_text", text: "" },
    { command: "push", content: new Uint8Array(1), path: "relative/path" },
    { command: "pull", path: "" },
    { command: "settings", namespace: "system", action: { verb: "get", key: "" } },
    { command: "settings", namespace: "system", action: { verb: "reset", packageName: "", mode: "" } },
    { command: "settings", namespace: "bogus" as never, action: { verb: "list" } },
    { command: "generic", args: [] },
    { command: "generic", args: ["shell"] },
    { command: "package_manager_grant", packageName: "com.a", permissions: [] },
    { command: "package_manager_clear", packageName: "com.a", userId: "0; reboot" },
    { command: "send_broadcast", action: "", component: "" },
    { command: "send_broadcast", action: "a.B", component: "not a component" },
    dumpsys({ timeoutMs: -1 }),
    { command: "install_apk", location: { kind: "filesystem", path: "", declaredPath: "" } },
    { command: "install_apk", location: { kind: "blob", contents: new Uint8Array(0) } },
  ];
  for (const cmd of bad) {
    const { lines, r } = await linesOf(cmd);
    assert.equal(r.status, "failed_precondition", `${JSON.stringify(cmd)}: ${r.status} ${r.message}`);
    assert.deepEqual(lines, [], JSON.stringify(cmd));
    assert.notEqual(r.message, "");
  }
});
