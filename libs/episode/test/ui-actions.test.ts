/**
 * UI actions (AndroidWorld's JSON actions) carried out on simulated emulators through a real (private) adb server,
 * over both action channels (the emulator's gRPC input stream, and the adb shell stream), each checked against what
 * the app then shows: the screen read as a tree after every step (a11yEvery 1), and the app's own log lines.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { AdbDriver, isScreenTree, type GrpcEndpoint } from "@farm/adb";
import { scriptedPolicy, type Observation, type Policy, type PolicyAnswer, type UiElement } from "@farm/policy";
import { parseTaskText, type LoadedTask } from "@farm/task";
import { DeviceSession, type EpisodeConfig, type EpisodeTrajectory, type RunEpisodeOptions } from "../src/index.ts";
import { REPO } from "./fixtures.ts";

type Fleet = Awaited<ReturnType<typeof startSimulatedDevices>>;

let adb: LocalAdbServer;
let fleet: Fleet;
let driver: AdbDriver;
const DEVICES = 10;
/** Devices [0, GRPC) take actions over gRPC, the rest over the adb shell stream. */
const GRPC = 5;
const free = { grpc: 0, shell: GRPC };

before(async () => {
  adb = await startAdbServer();
  fleet = await startSimulatedDevices({ adbPort: adb.port, count: DEVICES, emulator: { discovery: false } });
  const endpoints: Record<string, GrpcEndpoint> = {};
  for (const e of fleet.emulators.slice(0, GRPC)) endpoints[e.serial] = { address: `127.0.0.1:${e.grpc!.port}` };
  driver = new AdbDriver({ host: "127.0.0.1", port: adb.port, actionTimeoutMs: 5000, queryTimeoutMs: 5000, grpc: { mode: "config", endpoints } });
});

after(async () => {
  await driver?.close();
  await fleet?.close();
  await adb?.close();
});

type Transport = "grpc" | "shell";
const TRANSPORTS: Transport[] = ["grpc", "shell"];

function takeDevice(t: Transport): string {
  const i = free[t]++;
  assert.ok(t === "grpc" ? i < GRPC : i < DEVICES, `not enough ${t} devices`);
  const serial = fleet.emulators[i]!.serial;
  // A device with an endpoint gets the gRPC action channel (libs/adb/test/grpc-transport.test.ts), the rest the shell stream.
  assert.equal(driver.device(serial).grpcEndpoint() !== undefined, t === "grpc");
  return serial;
}

function loadTask(id: string): LoadedTask {
  const file = path.join(REPO, "tasks", `${id}.textproto`);
  return parseTaskText(fs.readFileSync(file, "utf8"), { sourcePath: file });
}

const CONFIG: EpisodeConfig = { settleMs: 20, logSettleMs: 20, stepTimeoutMs: 20_000, resetTimeoutMs: 30_000, adbCallTimeoutMs: 10_000, recoveryBackoffMs: 100, recoveryWaitMs: 5000, appScreenCheckEverySteps: 0 };

async function open(serial: string, taskId = "todo_create_note"): Promise<DeviceSession> {
  const s = await DeviceSession.open({ device: driver.device(serial), task: loadTask(taskId), config: CONFIG });
  assert.equal(s.state, "ready", s.unusableReason);
  return s;
}

type Move = PolicyAnswer | ((els: UiElement[]) => PolicyAnswer);

/** Plays the moves in order (a function sees the elements of the screen it acts on), then answers status complete. */
function playbook(moves: Move[], opts: { needsElements?: boolean } = {}): Policy & { seen: Observation[] } {
  let i = 0;
  const seen: Observation[] = [];
  return {
    name: "playbook",
    version: "1",
    needsPixels: false,
    needsElements: opts.needsElements ?? true,
    seen,
    async reset() {
      i = 0;
    },
    async act(obs) {
      seen.push(obs);
      const m = moves[i++];
      if (m === undefined) return { action_type: "status", goal_status: "complete" };
      return typeof m === "function" ? m(obs.elements ?? []) : m;
    },
    async close() {},
  };
}

async function run(s: DeviceSession, policy: Policy, extra: Partial<RunEpisodeOptions> = {}): Promise<EpisodeTrajectory> {
  return s.runEpisode({ seed: 1, index: 0, policy, a11yEvery: 1, ...extra });
}

/** The element whose text, content description or resource id (suffix) is `key`. */
function find(els: readonly UiElement[], key: string): UiElement {
  const e = els.find((x) => x.text === key || x.content_description === key || x.resource_id.endsWith(`:id/${key}`));
  assert.ok(e, `no element ${key} in ${els.map((x) => x.text || x.content_description || x.resource_id).join(" | ")}`);
  return e;
}
const idx = (key: string) => (els: UiElement[]) => find(els, key).index;
/** The elements the screen showed after step k (1-based). */
function after_(t: EpisodeTrajectory, k: number): UiElement[] {
  const st = t.steps[k - 1];
  assert.ok(st?.a11y, `step ${k} recorded no tree`);
  return st.a11y.elements;
}
const titles = (els: readonly UiElement[]) => els.filter((e) => e.resource_id.endsWith(":id/note_title")).map((e) => e.text);

for (const transport of TRANSPORTS) {
  describe(`over ${transport}`, () => {
    test("Todo editor: click, input_text into an element (and by x,y, and clearing it), double_tap, keyboard_enter, navigate_back", async () => {
      const s = await open(takeDevice(transport));
      try {
        const t = await run(
          s,
          playbook([
            (els) => ({ action_type: "click", index: idx("NEW NOTE")(els) }),
            (els) => ({ action_type: "input_text", index: idx("title_input")(els), text: "milk" }),
            (els) => ({ action_type: "double_tap", index: idx("m")(els) }),
            { action_type: "keyboard_enter" },
            (els) => {
              const b = find(els, "body_input").bounds;
              return { action_type: "input_text", x: b[0] + 10, y: b[1] + 10, text: "2 litres" };
            },
            (els) => ({ action_type: "input_text", index: idx("title_input")(els), text: "bread", clear_text: true }),
            { action_type: "keyboard_enter" },
            { action_type: "keyboard_enter" },
            { action_type: "navigate_back" },
          ]),
        );
        assert.equal(t.cause, "agent_status", `${t.cause}: ${t.causeDetail}`);
        assert.equal(t.invalidActions, 0, JSON.stringify(t.steps.map((x) => x.ui)));
        assert.equal(find(after_(t, 1), "toolbar_title").text, "New note", "click NEW NOTE opens the editor");
        assert.equal(find(after_(t, 1), "title_input").is_focused, true, "with the title focused");
        assert.equal(find(after_(t, 2), "title_input").text, "milk", "input_text shows the text in the field");
        assert.deepEqual(t.steps[1]!.ui?.resolved && { op: t.steps[1]!.ui.resolved.op, text: t.steps[1]!.ui.resolved.text }, { op: "type", text: "milk" });
        assert.equal(find(after_(t, 3), "title_input").text, "milkmm", "a double tap on the M key is two taps: mm");
        assert.equal(t.steps[2]!.ui?.resolved?.op, "double_tap");
        assert.equal(find(after_(t, 4), "body_input").is_focused, true, "keyboard_enter in the title moves to the body");
        assert.equal(t.steps[3]!.ui?.resolved?.key, "KEYCODE_ENTER");
        assert.equal(find(after_(t, 5), "body_input").text, "2 litres", "input_text at x,y types into the field there");
        assert.equal(find(after_(t, 6), "title_input").text, "bread", "clear_text empties the field first");
        assert.equal(find(after_(t, 8), "toolbar_title").text, "New note", "still in the editor with the keyboard hidden");
        assert.ok(!after_(t, 8).some((e) => e.class_name.endsWith("Keyboard$Key")), "Enter in the body hid the keyboard");
        assert.equal(find(after_(t, 9), "toolbar_title").text, "Todo", "navigate_back leaves the editor");
        assert.ok(!titles(after_(t, 9)).includes("bread"), "without saving");
        assert.equal(t.steps.every((st) => st.action.actionType === "REPEAT"), true, "a UI step's AndroidEnv action is REPEAT");
      } finally {
        await s.close();
      }
    });

    test("Todo list: scroll and swipe move it; long_press on a note asks to delete it, a click opens it; wait pauses", async () => {
      const s = await open(takeDevice(transport));
      try {
        const t = await run(
          s,
          playbook([
            { action_type: "scroll", direction: "down" },
            { action_type: "scroll", direction: "up" },
            (els) => ({ action_type: "scroll", direction: "down", index: idx("notes")(els) }),
            { action_type: "swipe", direction: "down" },
            { action_type: "swipe", direction: "up" },
            { action_type: "swipe", direction: "down" },
            { action_type: "scroll", direction: "right" },
            (els) => ({ action_type: "long_press", index: idx("Buy bread")(els) }),
            { action_type: "navigate_back" },
            (els) => ({ action_type: "click", index: idx("Call mom")(els) }),
            { action_type: "wait" },
          ]),
        );
        assert.equal(t.cause, "agent_status", `${t.cause}: ${t.causeDetail}`);
        assert.equal(t.invalidActions, 0, JSON.stringify(t.steps.map((x) => x.ui)));
        const first = (k: number) => titles(after_(t, k))[0];
        assert.notEqual(first(1), "Buy bread", "scroll down shows the notes below");
        assert.ok(titles(after_(t, 1)).includes("Walk dog"), "down to the last note");
        assert.equal(first(2), "Buy bread", "scroll up shows the top again");
        assert.notEqual(first(3), "Buy bread", "scrolling the list element works too");
        assert.equal(t.steps[2]!.ui?.resolved?.element, idx("notes")(after_(t, 2)));
        assert.equal(first(4), "Buy bread", "swipe down: the finger moves down, the list shows its top");
        assert.notEqual(first(5), "Buy bread", "swipe up: the finger moves up, the list shows what is below");
        const r5 = t.steps[4]!.ui!.resolved!;
        assert.ok(r5.y! > r5.toY! && r5.x === r5.toX, `swipe up moves the finger up: ${JSON.stringify(r5)}`);
        const r7 = t.steps[6]!.ui!.resolved!;
        assert.ok(r7.toX! < r7.x! && r7.y === r7.toY, `scroll right moves the finger left: ${JSON.stringify(r7)}`);
        assert.equal(find(after_(t, 8), "alertTitle").text, "Delete note?", "a long press on a note asks to delete it");
        assert.equal(find(after_(t, 8), "message").text, "Buy bread will be deleted.");
        assert.equal(t.steps[7]!.ui?.resolved?.op, "long_press");
        assert.ok(!after_(t, 9).some((e) => e.text === "Delete note?"), "BACK cancels the dialog");
        assert.deepEqual([find(after_(t, 10), "toolbar_title").text, find(after_(t, 10), "title_input").text], ["Edit note", "Call mom"], "a click opens the note");
        assert.equal(t.steps[10]!.ui?.resolved?.op, "wait");
        assert.ok(t.steps[10]!.ui!.resolved!.durationMs! >= 900, "wait pauses about a second");
      } finally {
        await s.close();
      }
    });
  });
}

test("open_app by launcher label (any case) opens the app; navigate_home shows the launcher; an unknown app is invalid", async () => {
  const serial = takeDevice("grpc");
  const inst = await driver.device(serial).execute({ timeoutSec: 0, cmd: { command: "install_apk", location: { kind: "filesystem", path: path.join(REPO, "tasks/apks/sim_settings.apk"), declaredPath: "apks/sim_settings.apk" } } });
  assert.equal(inst.status, "ok", inst.message);
  const s = await open(serial);
  try {
    const t = await run(s, playbook([{ action_type: "open_app", app_name: "sim SETTINGS" }, { action_type: "navigate_home" }, { action_type: "open_app", app_name: "No Such App" }, { action_type: "open_app", app_name: "Todo" }]));
    assert.equal(t.cause, "agent_status", `${t.cause}: ${t.causeDetail}`);
    const opened = t.steps[0]!.ui?.resolved;
    assert.equal(opened?.op, "open_app", JSON.stringify(t.steps[0]!.ui));
    assert.equal(opened?.app, "com.farm.simapps.settings");
    assert.equal(find(after_(t, 1), "toolbar_title").text, "Sim Settings");
    assert.ok(after_(t, 1).every((e) => e.package_name === "com.farm.simapps.settings"));
    assert.equal(t.steps[1]!.ui?.resolved?.key, "KEYCODE_HOME");
    const home = after_(t, 2).map((e) => e.text);
    assert.ok(home.includes("Todo") && home.includes("Sim Settings"), `navigate_home shows the launcher: ${home.join(", ")}`);
    assert.match(t.steps[2]!.ui?.invalid ?? "", /no app labelled "No Such App"/);
    assert.equal(t.steps[3]!.ui?.resolved?.app, "com.farm.simapps.todo", "the episode went on after the invalid one");
    assert.equal(t.invalidActions, 1);
  } finally {
    await s.close();
  }
});

test("status complete ends the episode as terminated / agent_status with the task's reward (0: not solved); answer is recorded", async () => {
  const s = await open(takeDevice("grpc"));
  try {
    const t = await run(s, playbook([{ action_type: "answer", text: "2 litres" }, { action_type: "status", goal_status: "complete" }, { action_type: "wait" }]));
    assert.equal(t.outcome, "terminated");
    assert.equal(t.cause, "agent_status");
    assert.equal(t.agentStatus, "complete");
    assert.equal(t.answer, "2 litres");
    assert.equal(t.totalReward, 0, "the task's reward decides success, not the agent's claim");
    assert.equal(t.steps.length, 2, "the wait after status never ran");
    assert.deepEqual(t.steps[0]!.ui?.resolved, { op: "answer", text: "2 litres" });
  } finally {
    await s.close();
  }
});

test("invalid actions are recorded with their reason and the episode goes on; maxInvalidActions ends it as invalid_actions", async () => {
  const s = await open(takeDevice("shell"));
  const bad: Move[] = [
    { action_type: "click", index: 999 },
    { action_type: "click" } as PolicyAnswer,
    { action_type: "fly" } as unknown as PolicyAnswer,
    { action_type: "click", x: 5000, y: 10 },
    { action_type: "input_text", text: "two\nlines" },
    { action: undefined, invalid: "the model answered prose", given: "I think I should tap" },
    // Last: open_app goes HOME before it looks for the label, so the home screen shows after an unknown one.
    { action_type: "open_app", app_name: "Nope" },
  ];
  try {
    const t = await run(s, playbook([...bad, (els) => ({ action_type: "click", index: idx("Todo")(els) })]));
    assert.equal(t.cause, "agent_status", `${t.cause}: ${t.causeDetail}`);
    const reasons = t.steps.slice(0, bad.length).map((st) => st.ui?.invalid ?? "");
    assert.match(reasons[0]!, /index 999 is out of range: the screen had \d+ elements/);
    assert.match(reasons[1]!, /click needs an index or both x and y/);
    assert.match(reasons[2]!, /action_type must be one of/);
    assert.match(reasons[3]!, /x,y \(5000, 10\) is off the 360x640 screen/);
    assert.match(reasons[4]!, /control character U\+000A at position 3/);
    assert.equal(reasons[5], "the model answered prose");
    assert.equal(t.steps[5]!.ui?.given, "I think I should tap");
    assert.match(reasons[6]!, /no app labelled "Nope"/);
    assert.equal(t.invalidActions, bad.length);
    assert.equal(find(after_(t, bad.length + 1), "toolbar_title").text, "Todo", "the valid action after them was carried out (the Todo icon)");
    assert.equal(t.counters.invalid_actions, bad.length);

    const limited = await run(s, playbook(bad), { index: 1, limits: { maxInvalidActions: 2 } });
    assert.equal(limited.outcome, "truncated");
    assert.equal(limited.cause, "invalid_actions");
    assert.equal(limited.steps.length, 2);
    assert.match(limited.causeDetail, /2 invalid answers \(limit 2\)/);
  } finally {
    await s.close();
  }
});

test("an index without an element list (the policy did not ask for elements) is invalid, x,y still works", async () => {
  const serial = takeDevice("shell");
  const s = await open(serial);
  try {
    const t = await s.runEpisode({ seed: 1, index: 0, policy: playbook([{ action_type: "click", index: 0 }, { action_type: "click", x: 180, y: 604 }], { needsElements: false }) });
    assert.match(t.steps[0]!.ui?.invalid ?? "", /no element list was observed/);
    assert.equal(t.steps[1]!.ui?.resolved?.op, "tap");
    const tree = await driver.device(serial).screenTree!({ timeoutMs: 10_000 });
    assert.ok(isScreenTree(tree), "the screen reads as a tree");
    assert.ok(tree.windows.some((w) => w.tree.nodes.some((n) => n.text === "New note")), "the x,y click at NEW NOTE opened the editor");
  } finally {
    await s.close();
  }
});

for (const transport of TRANSPORTS) {
  test(`the scripted UI solution solves todo_create_note through runEpisode (${transport})`, async () => {
    const s = await open(takeDevice(transport));
    try {
      const policy = await scriptedPolicy(path.join(REPO, "tasks/solutions/todo_create_note.ui.jsonl"));
      assert.equal(policy.needsElements, true);
      const t = await s.runEpisode({ seed: 1, index: 0, policy });
      assert.equal(t.cause, "episode_end", `${t.cause}: ${t.causeDetail}`);
      assert.equal(t.outcome, "terminated");
      assert.equal(t.totalReward, 1);
      assert.equal(t.invalidActions, 0);
      assert.deepEqual(t.steps.slice(0, 5).map((st) => st.ui?.resolved?.op), ["tap", "type", "key", "type", "tap"]);
    } finally {
      await s.close();
    }
  });
}
