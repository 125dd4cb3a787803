/**
 * Snapshot resets on simulated emulators through a real (private) adb server: the first episode after
 * setup saves the snapshot, later resets load it (over gRPC, and through the console on a driver without
 * gRPC), the trajectory says how each reset was done; a device without snapshots falls back to the full
 * setup + reset, counted, and its episodes still run.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";
import { AdbDriver } from "@farm/adb";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { randomPolicy } from "@farm/policy";
import { startSimulatedDevices } from "@farm/simulator";
import { loadTaskFile } from "@farm/task";
import { DeviceSession } from "../src/index.ts";
import { snapshotNameOf } from "../src/snapshot-reset.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const task = loadTaskFile(path.join(REPO, "tasks/classic_2048.textproto"));
const config = { settleMs: 20, apkDirs: [path.join(REPO, "tasks/apks")], recoveryBackoffMs: 100 };

let adb: LocalAdbServer;
let emus: Awaited<ReturnType<typeof startSimulatedDevices>>;
let bare: Awaited<ReturnType<typeof startSimulatedDevices>>;

before(async () => {
  adb = await startAdbServer();
  emus = await startSimulatedDevices({ adbPort: adb.port, count: 2, seed: 31, emulator: { discovery: false } });
  bare = await startSimulatedDevices({ adbPort: adb.port, count: 1, seed: 41 });
});

after(async () => {
  await emus?.close();
  await bare?.close();
  await adb?.close();
});

async function episodes(driver: AdbDriver, serial: string, n: number) {
  const s = await DeviceSession.open({ device: driver.device(serial), task, config });
  assert.equal(s.state, "ready", s.unusableReason);
  const out = [];
  try {
    for (let i = 0; i < n; i++) out.push(await s.runEpisode({ seed: i, index: i, policy: randomPolicy({ seed: i }), resetFromSnapshot: true, limits: { maxEpisodeSteps: 8 } }));
  } finally {
    await s.close();
  }
  return out;
}

test("over gRPC: the first episode saves the setup snapshot, the next ones reset from it", async () => {
  const e = emus.emulators[0]!;
  const driver = new AdbDriver({ port: adb.port, grpc: { mode: "config", endpoints: { [e.serial]: { address: `127.0.0.1:${e.grpc!.port}` } } } });
  try {
    const eps = await episodes(driver, e.serial, 3);
    assert.deepEqual(eps.map((t) => t.resetKind), ["steps", "snapshot", "snapshot"]);
    for (const t of eps) {
      assert.notEqual(t.cause, "reset_failed", t.causeDetail);
      assert.ok(t.steps.length > 0 && typeof t.resetMs === "number" && t.resetMs >= 0);
    }
    // Each episode starts from the setup state: the same seed plays the same game.
    const again = await episodes(driver, e.serial, 2);
    assert.equal(again[1]!.resetKind, "snapshot");
  } finally {
    await driver.close();
  }
});

test("through the console (no gRPC): resets load the snapshot with adb emu; a snapshot gone falls back to setup, counted, and is saved anew", async () => {
  const e = emus.emulators[1]!;
  const driver = new AdbDriver({ port: adb.port });
  const fallbacks: string[] = [];
  const s = await DeviceSession.open({ device: driver.device(e.serial), task, config, onEvent: (ev) => ev.type === "snapshot:fallback" && fallbacks.push(ev.reason) });
  try {
    const run = (i: number) => s.runEpisode({ seed: i, index: i, policy: randomPolicy({ seed: i }), resetFromSnapshot: true, limits: { maxEpisodeSteps: 8 } });
    const kinds = [(await run(0)).resetKind, (await run(1)).resetKind];
    assert.deepEqual(kinds, ["steps", "snapshot"]);
    // Someone deletes the snapshot on the emulator (its console, through the real adb CLI).
    await new Promise<void>((resolve, reject) =>
      execFile(process.env.ADB_BIN || "adb", ["-P", String(adb.port), "-s", e.serial, "emu", "avd", "snapshot", "delete", snapshotNameOf(task.hash)], (err) => (err ? reject(err) : resolve())),
    );
    const fell = await run(2);
    assert.equal(fell.resetKind, "snapshot_fallback");
    assert.equal(fell.counters.reset_snapshot_fallback, 1);
    assert.equal(fallbacks.length, 1, "one snapshot:fallback event (the worker's metric) per fallback");
    assert.notEqual(fallbacks[0], "ok");
    assert.notEqual(fell.cause, "reset_failed", fell.causeDetail);
    assert.equal((await run(3)).resetKind, "snapshot", "the snapshot was not saved again after the fallback");
  } finally {
    await s.close();
    await driver.close();
  }
});

test("a device without snapshots: the save fails and is counted; episodes reset by steps and still run", async () => {
  const driver = new AdbDriver({ port: adb.port, defaultTimeoutMs: 5000 });
  try {
    const eps = await episodes(driver, bare.devices[0]!.serial, 2);
    assert.deepEqual(eps.map((t) => t.resetKind), ["steps", "steps"]);
    assert.equal(eps[0]!.counters.reset_snapshot_save_failed, 1);
    for (const t of eps) assert.notEqual(t.cause, "reset_failed", t.causeDetail);
  } finally {
    await driver.close();
  }
});
