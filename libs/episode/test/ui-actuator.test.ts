/**
 * actuateUi at the device boundary, without a device: what a recording action channel receives, how trouble and
 * aborts come back (never thrown), and the adb fallback for a channel that cannot type (one quoted word).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ActionChannel, Device, ShellResult, StepResult } from "@farm/adb";
import type { UiAction, UiElement } from "@farm/policy";
import { actuateUi, CLEAR_UNKNOWN_DELS, WAIT_MS, type UiActuatorDevice } from "../src/ui-actuator.ts";

const OK: StepResult = { status: "ok", message: "", output: "", durationMs: 0 };

function recorder(opts: { fail?: string; throws?: boolean } = {}): { ch: ActionChannel; calls: string[] } {
  const calls: string[] = [];
  const rec = (call: string): Promise<StepResult> => {
    calls.push(call);
    if (opts.throws) return Promise.reject(new Error("socket gone"));
    return Promise.resolve(opts.fail && call.startsWith(opts.fail) ? { status: "timeout", message: "no answer", output: "", durationMs: 1 } : OK);
  };
  const ch: ActionChannel = {
    touchDown: (x, y) => rec(`down ${x},${y}`),
    touchMove: (x, y) => rec(`move ${x},${y}`),
    touchUp: (x, y) => rec(`up ${x},${y}`),
    tap: (x, y) => rec(`tap ${x},${y}`),
    swipe: (x1, y1, x2, y2, ms) => rec(`swipe ${x1},${y1}->${x2},${y2} ${ms}ms`),
    keyEvent: (k) => rec(`key ${k}`),
    keyEvents: (ks) => rec(`keys ${ks.join(" ")}`),
    text: (t) => rec(`text ${t}`),
    close: async () => undefined,
  };
  return { ch, calls };
}

function dev(ch: ActionChannel | undefined, shell: string[] = []): UiActuatorDevice {
  const device = {
    serial: "fake",
    shell: async (line: string): Promise<ShellResult> => {
      shell.push(line);
      return { status: "ok", message: "", stdout: "", durationMs: 1 };
    },
  } as unknown as Device;
  return { device, channel: ch, screen: () => ({ width: 360, height: 640 }), adbCallTimeoutMs: 1000 };
}

function field(index: number, text: string, focused = false): UiElement {
  return { index, class_name: "android.widget.EditText", text, content_description: "", hint_text: "Title", resource_id: "app:id/title", package_name: "p", bounds: [16, 72, 304, 120], is_clickable: true, is_long_clickable: true, is_editable: true, is_scrollable: false, is_checkable: false, is_checked: false, is_focused: focused, is_enabled: true, is_selected: false };
}

const act = (ui: UiAction, d: UiActuatorDevice, els?: UiElement[], signal = new AbortController().signal) => actuateUi(ui, els, d, signal);

test("input_text into an element: a focusing tap, END and one DEL per character as one command when clearing, then the text", async () => {
  const r = recorder();
  const out = await act({ action_type: "input_text", index: 0, text: "milk", clear_text: true }, dev(r.ch), [field(0, "abc")]);
  assert.deepEqual(r.calls, ["tap 160,96", "keys KEYCODE_MOVE_END KEYCODE_DEL KEYCODE_DEL KEYCODE_DEL", "text milk"]);
  assert.ok("resolved" in out && out.result.status === "ok");
  assert.deepEqual({ ...out.resolved, durationMs: 0 }, { op: "type", text: "milk", x: 160, y: 96, element: 0, durationMs: 0 });
  const unknown = recorder();
  await act({ action_type: "input_text", text: "", clear_text: true }, dev(unknown.ch), []);
  assert.equal(unknown.calls.length, 1, "one command");
  assert.equal(unknown.calls[0]!.split(" ").filter((k) => k === "KEYCODE_DEL").length, CLEAR_UNKNOWN_DELS, "no field known: a bounded number of DELs");
  const focused = recorder();
  await act({ action_type: "input_text", text: "x", clear_text: true }, dev(focused.ch), [field(0, "hello", true)]);
  assert.deepEqual(focused.calls, [`keys KEYCODE_MOVE_END ${Array(5).fill("KEYCODE_DEL").join(" ")}`, "text x"], "no target: the focused field as the list shows it");
  const long = recorder();
  await act({ action_type: "input_text", text: "y", clear_text: true }, dev(long.ch), [field(0, "z".repeat(5000), true)]);
  assert.equal(long.calls[0]!.split(" ").filter((k) => k === "KEYCODE_DEL").length, 500, "at most 500 DELs, in one command");
});

test("device trouble is the failed result, never a throw: a failing step, a throwing channel, no channel", async () => {
  const slow = recorder({ fail: "keys" });
  const out = await act({ action_type: "input_text", index: 0, text: "milk", clear_text: true }, dev(slow.ch), [field(0, "ab")]);
  assert.ok("result" in out);
  assert.equal(out.result.status, "timeout");
  assert.deepEqual(slow.calls, ["tap 160,96", "keys KEYCODE_MOVE_END KEYCODE_DEL KEYCODE_DEL"], "nothing after the failure");
  const thrown = await act({ action_type: "click", x: 1, y: 1 }, dev(recorder({ throws: true }).ch));
  assert.ok("result" in thrown);
  assert.equal(thrown.result.status, "adb_error");
  assert.match(thrown.result.message, /socket gone/);
  const none = await act({ action_type: "navigate_back" }, dev(undefined));
  assert.ok("result" in none);
  assert.equal(none.result.status, "adb_error");
  assert.match(none.result.message, /no open action channel/);
});

test("an abort cuts a wait short and stops a double tap between its taps; what was done is resolved", async () => {
  const ac = new AbortController();
  ac.abort();
  const waited = await act({ action_type: "wait" }, dev(recorder().ch), undefined, ac.signal);
  assert.ok("resolved" in waited && waited.resolved.op === "wait");
  assert.ok(waited.resolved.durationMs! < WAIT_MS, "an aborted episode does not wait the second out");
  const r = recorder();
  const aborting: ActionChannel = { ...r.ch, tap: (x, y) => r.ch.tap(x, y).then((res) => (ac2.abort(), res)) };
  const ac2 = new AbortController();
  const dbl = await act({ action_type: "double_tap", x: 5, y: 6 }, dev(aborting), undefined, ac2.signal);
  assert.deepEqual(r.calls, ["tap 5,6"]);
  assert.ok("resolved" in dbl && dbl.result.status === "ok" && dbl.resolved.op === "double_tap");
});

test("long_press holds the finger still; keys; scroll and swipe are swipes with their durations", async () => {
  const r = recorder();
  const d = dev(r.ch);
  await act({ action_type: "long_press", x: 10, y: 20 }, d);
  await act({ action_type: "keyboard_enter" }, d);
  await act({ action_type: "navigate_home" }, d);
  await act({ action_type: "scroll", direction: "down" }, d);
  await act({ action_type: "swipe", direction: "left" }, d);
  assert.deepEqual(r.calls, ["swipe 10,20->10,20 1000ms", "key KEYCODE_ENTER", "key KEYCODE_HOME", "swipe 179,319->179,0 300ms", "swipe 288,320->72,320 500ms"]);
});
