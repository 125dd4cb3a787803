/**
 * Reset modes on simulated emulators through a real (private) adb server. The leak test reads Classic 2048's own
 * state (board, score) right after each reset and after the episode's moves: in every mode each episode starts
 * from exactly the first episode's start state although the moves changed it, and its summed reward is the
 * app's own final score (nothing of the previous episode leaks in). `start-snapshot` loads its snapshot instead
 * of running the reset steps; a snapshot that is gone falls back to setup + reset steps, counted, and is saved
 * anew. A task whose reset draws from the episode's seed is refused the mode.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { AdbDriver } from "@farm/adb";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { randomPolicy } from "@farm/policy";
import { startSimulatedDevices, type SimDevice } from "@farm/simulator";
import { parseTaskText, startSnapshotRefusal, type ResetMode } from "@farm/task";
import { DeviceSession, TaskNotRunnableError, type EpisodeTrajectory } from "../src/index.ts";
import { startSnapshotName } from "../src/start-snapshot.ts";
import { APK_DIR, task as taskOf } from "./fixtures.ts";

const config = { settleMs: 10, logSettleMs: 5, apkDirs: [APK_DIR], recoveryBackoffMs: 100 };

const RANDOM_RESET = `
id: "random_reset"
setup_steps: [ { adb_call: { install_apk: { filesystem: { path: "sim_notes.apk" } } } } ]
reset_steps: [
  { adb_call: { start_random_activity: { activity_list: ["com.farm.simapps.notes/com.farm.simapps.notes.MainActivity"] timeout_sec: 2.0 } } }
]
max_num_steps: 5
log_parsing_config: { filters: ["AndroidRLTask:V"] log_regexps: { reward: "^[Rr]eward: ([-+]?[0-9]*\\\\.?[0-9]*)$" } }
`;

let adb: LocalAdbServer;
let emus: Awaited<ReturnType<typeof startSimulatedDevices>>;
let driver: AdbDriver;
/** The task steps' device calls (`step:force_stop`, `step:start_activity`, …), in order. */
const stepCalls: string[] = [];

before(async () => {
  adb = await startAdbServer();
  emus = await startSimulatedDevices({ adbPort: adb.port, count: 2, seed: 3131, emulator: { discovery: false } });
  const endpoints = Object.fromEntries(emus.emulators.map((e) => [e.serial, { address: `127.0.0.1:${e.grpc!.port}` }]));
  driver = new AdbDriver({ port: adb.port, grpc: { mode: "config", endpoints }, events: { onCall: (ev) => void (ev.op.startsWith("step:") && stepCalls.push(ev.op)) } });
});

after(async () => {
  await driver?.close();
  for (const e of emus?.emulators ?? []) for (const s of await e.device.snapshots.list()) if (s.name.startsWith("farm-")) await e.device.snapshots.delete(s.name);
  await emus?.close();
  await adb?.close();
});

interface Game {
  grid: number[][];
  score: number;
}

const gameOf = (dev: SimDevice): Game => structuredClone(dev.android.appState() as Game);

/** Episodes driven step by step, reading the app's state after each reset and at the end. */
async function play(s: DeviceSession, dev: SimDevice, mode: ResetMode, from: number, n: number) {
  const out: { start: Game; end: Game; t: EpisodeTrajectory; resetCalls: string[] }[] = [];
  for (let i = from; i < from + n; i++) {
    const calls0 = stepCalls.length;
    const run = await s.startEpisode({ seed: i, index: i, policy: randomPolicy({ seed: i }), resetMode: mode, limits: { maxEpisodeSteps: 25 } });
    await run.reset();
    const resetCalls = stepCalls.slice(calls0);
    const start = gameOf(dev);
    while (await run.step()) {}
    const t = await run.finish();
    assert.notEqual(t.cause, "reset_failed", t.causeDetail);
    assert.ok(t.steps.length > 0, `episode ${i} ran no steps: ${t.cause} ${t.causeDetail}`);
    out.push({ start, end: gameOf(dev), t, resetCalls });
  }
  return out;
}

function assertNoLeak(mode: string, eps: { start: Game; end: Game; t: EpisodeTrajectory }[]) {
  const first = eps[0]!.start;
  assert.equal(first.score, 0, `${mode}: the first episode starts a new game`);
  assert.ok(eps.some((e) => e.end.score > 0 && JSON.stringify(e.end.grid) !== JSON.stringify(first.grid)), `${mode}: the moves changed the app's data`);
  eps.forEach((e, i) => {
    assert.deepEqual(e.start, first, `${mode}: episode ${i} starts with exactly the first episode's board and score`);
    assert.equal(e.t.totalReward, e.end.score, `${mode}: episode ${i}'s summed reward is the app's own final score`);
  });
}

for (const mode of ["steps", "setup-snapshot", "start-snapshot"] as const) {
  test(`${mode}: each episode starts with the same app data, whatever the previous one did`, async () => {
    const e = emus.emulators[0]!;
    const loads0 = e.device.android.system.restoreCount;
    const s = await DeviceSession.open({ device: driver.device(e.serial), task: taskOf({ id: `leak_${mode.replace("-", "_")}`, app: "twozero" }), config });
    assert.equal(s.state, "ready", s.unusableReason);
    try {
      const eps = await play(s, e.device, mode, 0, 4);
      assertNoLeak(mode, eps);
      const kinds = eps.map((x) => x.t.resetKind);
      const loads = e.device.android.system.restoreCount - loads0;
      if (mode === "steps") assert.deepEqual([kinds, loads], [["steps", "steps", "steps", "steps"], 0]);
      if (mode === "setup-snapshot") assert.deepEqual([kinds, loads], [["steps", "snapshot", "snapshot", "snapshot"], 3]);
      if (mode === "start-snapshot") {
        assert.deepEqual([kinds, loads], [["steps", "start_snapshot", "start_snapshot", "start_snapshot"], 3]);
        assert.equal(eps[0]!.t.counters.reset_start_snapshot_saved, 1, "saved once, after setup and the reset steps");
        // The loaded episodes ran no reset step (no force-stop, no start): the snapshot replaced them.
        assert.ok(eps[0]!.resetCalls.includes("step:start_activity"), eps[0]!.resetCalls.join());
        for (const x of eps.slice(1)) assert.deepEqual(x.resetCalls, []);
      }
    } finally {
      await s.close();
    }
  });
}

test("start-snapshot: a snapshot that is gone falls back to setup + reset steps, counted; the episode completes and the snapshot is saved anew", async () => {
  const e = emus.emulators[1]!;
  const fallbacks: string[] = [];
  const starts: string[] = [];
  const s = await DeviceSession.open({
    device: driver.device(e.serial),
    task: taskOf({ id: "fallback_2048", app: "twozero" }),
    config,
    onEvent: (ev) => {
      if (ev.type === "snapshot:fallback") fallbacks.push(ev.reason);
      if (ev.type === "episode:start") starts.push(`${ev.resetMode}/${ev.resetKind}`);
    },
  });
  try {
    const before = await play(s, e.device, "start-snapshot", 0, 2);
    const saved = (await e.device.snapshots.list()).filter((x) => x.name.startsWith("farm-start-"));
    assert.equal(saved.length, 1, "one start snapshot on the device");
    await e.device.snapshots.delete(saved[0]!.name);
    const after = await play(s, e.device, "start-snapshot", 2, 2);
    assert.deepEqual(after.map((x) => x.t.resetKind), ["snapshot_fallback", "start_snapshot"]);
    assert.equal(after[0]!.t.counters.reset_snapshot_fallback, 1);
    assert.equal(after[0]!.t.counters.reset_start_snapshot_saved, 1, "saved anew after the fallback's setup + reset steps");
    assert.equal(fallbacks.length, 1, "one snapshot:fallback event (the worker's metric) per fallback");
    assert.notEqual(fallbacks[0], "ok");
    assert.deepEqual(starts, ["start-snapshot/steps", "start-snapshot/start_snapshot", "start-snapshot/snapshot_fallback", "start-snapshot/start_snapshot"]);
    assertNoLeak("start-snapshot", [...before, ...after]);
  } finally {
    await s.close();
  }
});

test("a task whose reset draws from the episode's seed: start-snapshot is refused, naming the task and the step", async () => {
  const t = parseTaskText(RANDOM_RESET, { sourcePath: "/tmp/random_reset.textproto", apkDirs: [APK_DIR] });
  const why = startSnapshotRefusal(t.task);
  assert.match(why ?? "", /task 'random_reset' reset_steps\[0\] \(line 5\): start_random_activity/);
  assert.equal(startSnapshotRefusal(taskOf({ id: "plain", app: "twozero" }).task), undefined);
  const e = emus.emulators[1]!;
  const s = await DeviceSession.open({ device: driver.device(e.serial), task: t, config });
  try {
    await assert.rejects(s.runEpisode({ seed: 1, index: 0, policy: randomPolicy(), resetMode: "start-snapshot" }), (err: Error) => err instanceof TaskNotRunnableError && /random_reset/.test(err.message));
  } finally {
    await s.close();
  }
});


test("start-snapshot on a device without snapshots: the save fails once, counted; every episode resets by steps and runs", async () => {
  const bare = await startSimulatedDevices({ adbPort: adb.port, count: 1, seed: 4141 });
  const d = new AdbDriver({ port: adb.port, defaultTimeoutMs: 5000, events: { onCall: (ev) => void (ev.op.startsWith("step:") && stepCalls.push(ev.op)) } });
  const s = await DeviceSession.open({ device: d.device(bare.devices[0]!.serial), task: taskOf({ id: "bare_2048", app: "twozero" }), config });
  try {
    const eps = await play(s, bare.devices[0]!, "start-snapshot", 0, 3);
    assert.deepEqual(eps.map((x) => x.t.resetKind), ["steps", "steps", "steps"]);
    assert.equal(eps[0]!.t.counters.reset_snapshot_save_failed, 1);
    assert.equal(eps[1]!.t.counters.reset_snapshot_save_failed, undefined, "not tried again every episode");
    for (const x of eps.slice(1)) assert.ok(x.resetCalls.includes("step:start_activity"), "reset by the task's steps");
    assertNoLeak("start-snapshot (no snapshots)", eps);
  } finally {
    await s.close();
    await d.close();
    await bare.close();
  }
});

test("start snapshot names: one per task, config and screen; always a safe snapshot name", () => {
  const h = "8d866adb4c20a367391ab9bc3e833be1b2a801e0ccc7dc0632e07829e7231215";
  const base = startSnapshotName(h, { apkDirs: ["/a"], setupSeed: 0 }, { width: 1080, height: 1920 });
  assert.match(base, /^farm-start-8d866adb4c20a367-[0-9a-f]{8}-1080x1920$/);
  const others = [
    startSnapshotName("0".repeat(64), { apkDirs: ["/a"], setupSeed: 0 }, { width: 1080, height: 1920 }),
    startSnapshotName(h, { apkDirs: ["/b"], setupSeed: 0 }, { width: 1080, height: 1920 }),
    startSnapshotName(h, { apkDirs: ["/a"], setupSeed: 1 }, { width: 1080, height: 1920 }),
    startSnapshotName(h, { apkDirs: ["/a"], setupSeed: 0 }, { width: 720, height: 1280 }),
  ];
  assert.equal(new Set([base, ...others]).size, 5);
  // A hostile hash cannot put a path or shell word into the name; an impossible screen is refused.
  assert.match(startSnapshotName("../../etc; rm -rf /", {}, { width: 1, height: 1 }), /^farm-start-etcrmrf-[0-9a-f]{8}-1x1$/);
  assert.throws(() => startSnapshotName(h, {}, { width: -1, height: 2 }), RangeError);
});
