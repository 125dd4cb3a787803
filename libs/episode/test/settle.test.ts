/**
 * Settle policies (issue 36): the spec's one parser; each policy against the simulated device's transitions at the
 * `emulator-grpc` motion profile (a screen sliding in with the keyboard, the notes list loading behind a spinner, a
 * swipe's fling), judged by the simulator's ground truth (no observation before the action's effect was complete);
 * the cap when the screen never settles (a spinner that never stops: the step goes on at the cap, marked capped);
 * the settle time on each step and the spec on the episode.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { AdbDriver, type GrpcEndpoint } from "@farm/adb";
import type { Policy, PolicyAnswer, UiElement } from "@farm/policy";
import { parseTaskText } from "@farm/task";
import { DeviceSession, formatSettleSpec, parseSettleSpec, settleScreen, SettleSpecError, type EpisodeEvent, type SettleSignals } from "../src/index.ts";
import { REPO } from "./fixtures.ts";
import { sleep } from "@farm/time";

describe("settle specs", () => {
  test("forms, defaults and the text recorded", () => {
    assert.deepEqual(parseSettleSpec("none"), { kind: "none" });
    assert.equal(formatSettleSpec(parseSettleSpec("fixed:500")), "fixed:500");
    assert.equal(formatSettleSpec(parseSettleSpec("androidworld")), "androidworld:wait=2000,cap=6000");
    assert.equal(formatSettleSpec(parseSettleSpec("events")), "events:quiet=300,cap=6000");
    assert.equal(formatSettleSpec(parseSettleSpec("frames:quiet=150,cap=2000")), "frames:quiet=150,cap=2000");
  });
  test("a bad spec names where it came from and what to give", () => {
    for (const [bad, re] of [
      ["sleep:5", /^--settle: unknown settle policy "sleep"; one of none \| fixed:MS/],
      ["fixed", /fixed:MS/],
      ["fixed:-1", /whole number of milliseconds/],
      ["fixed:70000", /out of range; 0\.\.60000/],
      ["events:quiet=500,cap=200", /longer than cap/],
      ["events:foo=1", /'events' takes quiet=MS, cap=MS/],
      ["events:", /nothing after 'events:'/],
      ["x".repeat(100), /at most 64 characters/],
    ] as const) {
      assert.throws(() => parseSettleSpec(bad), (e: unknown) => e instanceof SettleSpecError && re.test(e.message), bad);
    }
    assert.throws(() => parseSettleSpec("nope", "options.settle"), /^SettleSpecError: options\.settle: /);
  });
  test("a screen that never settles: the quiet policies and AndroidWorld's stop at their cap, marked capped", async () => {
    let n = 0;
    const busy: SettleSignals = { frameKey: async () => `f${n++}`, treeKey: async () => `t${n++}`, events: () => undefined };
    const frames = await settleScreen(parseSettleSpec("frames:quiet=50,cap=300"), busy, 10_000);
    assert.equal(frames.capped, true);
    assert.ok(frames.ms >= 290 && frames.ms < 1500, `${frames.ms}`);
    const aw = await settleScreen(parseSettleSpec("androidworld:wait=0,cap=1200"), busy, 10_000);
    assert.equal(aw.capped, true);
    const still: SettleSignals = { frameKey: async () => "same", treeKey: async () => "same", events: () => undefined };
    const ok = await settleScreen(parseSettleSpec("frames:quiet=60,cap=1000"), still, 10_000);
    assert.equal(ok.capped, false);
    assert.ok(ok.ms >= 55 && ok.ms < 600, `${ok.ms}`);
    const budget = await settleScreen(parseSettleSpec("fixed:5000"), still, 50);
    assert.equal(budget.capped, true, "the step's time left bounds any wait");
  });
});

type Fleet = Awaited<ReturnType<typeof startSimulatedDevices>>;
let adb: LocalAdbServer;
let fleet: Fleet;
let driver: AdbDriver;
const DEVICES = 5;
let next = 0;

before(async () => {
  adb = await startAdbServer();
  fleet = await startSimulatedDevices({ adbPort: adb.port, count: DEVICES, latencyProfile: "emulator-grpc", screen: { width: 360, height: 640 }, emulator: { discovery: false } });
  const endpoints: Record<string, GrpcEndpoint> = {};
  for (const e of fleet.emulators) endpoints[e.serial] = { address: `127.0.0.1:${e.grpc!.port}` };
  driver = new AdbDriver({ host: "127.0.0.1", port: adb.port, actionTimeoutMs: 5000, queryTimeoutMs: 5000, grpc: { mode: "config", endpoints } });
});
after(async () => {
  await driver?.close();
  await fleet?.close();
  await adb?.close();
});

const task = () => {
  const file = path.join(REPO, "tasks", "todo_create_note.textproto");
  return parseTaskText(fs.readFileSync(file, "utf8"), { sourcePath: file });
};

type Move = PolicyAnswer | ((els: UiElement[]) => PolicyAnswer);
function playbook(moves: Move[], needsElements = true): Policy {
  let i = 0;
  return {
    name: "playbook",
    version: "1",
    needsPixels: false,
    needsElements,
    async reset() {
      i = 0;
    },
    async act(obs) {
      const m = moves[i++];
      if (m === undefined) return { action_type: "status", goal_status: "complete" };
      return typeof m === "function" ? m(obs.elements ?? []) : m;
    },
    async close() {},
  };
}
const byText = (key: string) => (els: UiElement[]): PolicyAnswer => {
  const e = els.find((x) => x.text === key || x.resource_id.endsWith(`:id/${key}`));
  assert.ok(e, `no ${key} in ${els.map((x) => x.text || x.resource_id).join("|")}`);
  return { action_type: "click", index: e.index };
};

async function session(onEvent: (e: EpisodeEvent) => void): Promise<{ s: DeviceSession; i: number }> {
  const i = next++;
  assert.ok(i < DEVICES);
  const s = await DeviceSession.open({ device: driver.device(fleet.devices[i]!.serial), task: task(), onEvent, config: { settleMs: 20, logSettleMs: 0, stepTimeoutMs: 20_000, resetTimeoutMs: 30_000, adbCallTimeoutMs: 10_000, appScreenCheckEverySteps: 0, frameEvery: 0 } });
  assert.equal(s.state, "ready", s.unusableReason);
  return { s, i };
}

/** Steps whose observation began before the latest end among the inputs their action delivered (the ground truth). */
function staleSteps(steps: { actedAt: number; at: number }[], history: { inputAt: number; settledAt: number }[]): number[] {
  return steps.flatMap((s, k) => {
    const until = steps[k + 1]?.actedAt ?? Infinity;
    const done = Math.max(-Infinity, ...history.filter((r) => r.inputAt >= s.actedAt && r.inputAt < until).map((r) => r.settledAt));
    return done > s.at ? [k + 1] : [];
  });
}

// A new screen sliding in with the keyboard, back to the notes list (it loads behind a spinner), a swipe over it.
const MOVES: Move[] = [byText("NEW NOTE"), { action_type: "navigate_back" }, { action_type: "navigate_back" }, { action_type: "swipe", direction: "up" }];

// The devices are separate: the episodes run side by side (the file stays well under 30 s).
describe("on simulated devices at emulator-grpc", { concurrency: true }, () => {
for (const spec of ["events", "frames", "androidworld:wait=0,cap=6000"]) {
  test(`${spec}: every observation after the action's effect was complete; settle time on each step, the spec on the episode`, async () => {
    const steps: { actedAt: number; at: number }[] = [];
    const { s, i } = await session((e) => {
      if (e.type === "step" && e.actedAt !== undefined && e.observedAt !== undefined) steps.push({ actedAt: e.actedAt, at: e.observedAt });
    });
    try {
      const t = await s.runEpisode({ seed: 1, index: 0, policy: playbook(MOVES), settle: spec });
      assert.equal(t.cause, "agent_status", `${t.cause}: ${t.causeDetail}`);
      assert.equal(t.settle, formatSettleSpec(parseSettleSpec(spec)));
      const touched = t.steps.slice(0, MOVES.length);
      assert.ok(touched.every((x) => typeof x.settleMs === "number" && x.settleMs >= 0 && !x.settleCapped), JSON.stringify(t.steps.map((x) => [x.settleMs, x.settleCapped])));
      const longest = Math.max(...touched.map((x) => x.settleMs!));
      assert.ok(longest >= 1000, `back to the list: it loads for 1.2 s behind a spinner; the longest settle was ${longest} ms`);
      assert.deepEqual(staleSteps(steps, fleet.devices[i]!.android.settleHistory()), [], "no stale observation");
    } finally {
      await s.close();
    }
  });
}

test("fixed:0 observes too early (the bench can see stale screens); a spinner that never stops: the step goes on at the cap, marked capped", async () => {
  const steps: { actedAt: number; at: number }[] = [];
  const { s, i } = await session((e) => {
    if (e.type === "step" && e.actedAt !== undefined && e.observedAt !== undefined) steps.push({ actedAt: e.actedAt, at: e.observedAt });
  });
  try {
    const t = await s.runEpisode({ seed: 1, index: 0, policy: playbook(MOVES), settle: "fixed:0" });
    assert.equal(t.cause, "agent_status", `${t.cause}: ${t.causeDetail}`);
    assert.ok(staleSteps(steps, fleet.devices[i]!.android.settleHistory()).length > 0, "fixed:0 takes observations mid-transition");
    const never = await s.runEpisode({ seed: 2, index: 1, policy: playbook([{ action_type: "wait" }], false), settle: "events:quiet=100,cap=700", gameConfig: { list_load_ms: -1 } });
    assert.equal(never.cause, "agent_status", `${never.cause}: ${never.causeDetail}`);
    const st = never.steps[0]!;
    assert.equal(st.settleCapped, true, JSON.stringify(never.steps.map((x) => [x.settleMs, x.settleCapped])));
    assert.ok(st.settleMs! >= 650 && st.settleMs! < 5000, `${st.settleMs}`);
    assert.equal(never.steps.length, 2, "the episode went on after the capped step");
  } finally {
    await s.close();
  }
});
  test("the farm reads the device's accessibility events from `uiautomator events` (Device.openAccessibilityEvents)", async () => {
    const dev = driver.device(fleet.devices[next++]!.serial);
    const stream = await dev.openAccessibilityEvents!({ timeoutMs: 5000 });
    assert.ok("onEvent" in stream, JSON.stringify(stream));
    const types: string[] = [];
    stream.onEvent((t) => types.push(t));
    try {
      await sleep(400); // the tool's start-up (the profile's uiautomator latency)
      assert.equal((await dev.shell("am start -a android.settings.SETTINGS")).status, "ok");
      for (let waited = 0; waited < 3000 && !types.includes("TYPE_WINDOW_STATE_CHANGED"); waited += 50) await sleep(50);
      assert.ok(types.includes("TYPE_WINDOW_STATE_CHANGED"), types.join(","));
      assert.equal(stream.failed, undefined);
      assert.equal(stream.otherLines, 0);
    } finally {
      stream.close();
    }
  });
});
