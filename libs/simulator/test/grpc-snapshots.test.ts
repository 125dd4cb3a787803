/**
 * Snapshots of the whole simulated device through SnapshotService (real gRPC): save → play → load
 * gives byte-identical screenshots and the same app state, random generator included; packages,
 * files, settings, the log and the orientation come back; snapshots survive a device restart;
 * names are validated; loading takes the profile's delay.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { ImgFormat, SnapshotFilterStatus, SnapshotLoadStatus } from "@farm/emulator-grpc";
import { sh } from "./android-helpers.ts";
import { call, installAndStart, startGrpcRig, touch, G2048, NOTES, type Client, type GrpcRig } from "./grpc-helpers.ts";

let rig: GrpcRig;
before(async () => {
  rig = await startGrpcRig();
});
after(async () => {
  await rig.close();
});

async function swipe(ctl: Client, x1: number, y1: number, x2: number, y2: number): Promise<void> {
  await call(ctl, "sendTouch", { touches: [touch(x1, y1, 1)] });
  await call(ctl, "sendTouch", { touches: [touch((x1 + x2) / 2, (y1 + y2) / 2, 1)] });
  await call(ctl, "sendTouch", { touches: [touch(x2, y2, 0)] });
}

/** Left, down, right, up, left, down: enough moves to draw new tiles from the game's generator. */
async function play(ctl: Client): Promise<void> {
  for (const [x1, y1, x2, y2] of [[300, 320, 60, 320], [180, 150, 180, 450], [60, 320, 300, 320], [180, 450, 180, 150], [300, 320, 60, 320], [180, 150, 180, 450]] as const) {
    await swipe(ctl, x1, y1, x2, y2);
  }
}

async function screenshot(ctl: Client): Promise<Buffer> {
  return (await call(ctl, "getScreenshot", { format: ImgFormat.RGBA8888 })).image as Buffer;
}

test("save → play → load: identical screenshot, app state (random generator included), packages, files, settings, log, orientation", async () => {
  const { device, ctl, snap } = await rig.start();
  await installAndStart(device, "classic_2048.apk", G2048);
  await sh(device.android, "settings put system user_rotation 0");
  const saved = await call(snap, "SaveSnapshot", { snapshot_id: "start" });
  assert.equal(saved.success, true, Buffer.from(saved.err).toString());
  const shot0 = await screenshot(ctl);
  const state0 = device.android.appState();
  const log0 = (await sh(device.android, "logcat -d -v epoch")).out;

  await play(ctl);
  const shotAfterPlay = await screenshot(ctl);
  const stateAfterPlay = device.android.appState();
  assert.notDeepEqual(stateAfterPlay, state0, "playing changed the game");
  // Change everything else a snapshot must undo.
  device.android.installApk((await import("node:fs")).readFileSync(new URL("../../../tasks/apks/sim_notes.apk", import.meta.url)));
  device.android.fs.write("/sdcard/after.txt", new TextEncoder().encode("later"), 0o644, 1);
  await sh(device.android, "settings put global window_animation_scale 0.5");
  await sh(device.android, "settings put system user_rotation 1");

  const loaded = await call(snap, "LoadSnapshot", { snapshot_id: "start" });
  assert.equal(loaded.success, true, Buffer.from(loaded.err).toString());
  assert.ok((await screenshot(ctl)).equals(shot0), "screenshot byte-identical to the saved one");
  assert.deepEqual(device.android.appState(), state0);
  assert.equal(device.android.currentActivity(), G2048);
  assert.doesNotMatch((await sh(device.android, "pm list packages")).out, /com\.farm\.simapps\.notes/);
  assert.equal(device.android.fs.stat("/sdcard/after.txt"), undefined);
  assert.equal((await sh(device.android, "settings get global window_animation_scale")).out, "1.0\n");
  assert.equal(device.android.system.rotation(), 0);
  assert.equal((await sh(device.android, "logcat -d -v epoch")).out, log0, "the log is back where it was");

  // The game's random generator was restored too: the same moves give the same game again.
  await play(ctl);
  assert.deepEqual(device.android.appState(), stateAfterPlay);
  assert.ok((await screenshot(ctl)).equals(shotAfterPlay));

  const list = await call(snap, "ListSnapshots", {});
  const entry = list.snapshots.find((s: { snapshot_id: string }) => s.snapshot_id === "start");
  assert.ok(entry, JSON.stringify(list));
  assert.equal(entry.status, SnapshotLoadStatus.Loaded);
  assert.ok(entry.size > 0);
});

test("snapshots survive a device restart (same snapshot folder), and loading restores the saved screen", async () => {
  const dir = path.join(rig.snapshotRoot, "restart");
  const first = await rig.start({ snapshotDir: dir, seed: 3 });
  await installAndStart(first.device, "classic_2048.apk", G2048);
  await play(first.ctl);
  assert.equal((await call(first.snap, "SaveSnapshot", { snapshot_id: "mid_game" })).success, true);
  const shot = await screenshot(first.ctl);
  const state = first.device.android.appState();
  await first.device.close();

  const second = await rig.start({ snapshotDir: dir, seed: 99 });
  assert.equal(second.device.android.currentActivity(), "com.android.launcher3/com.android.launcher3.Launcher");
  const names = (await call(second.snap, "ListSnapshots", {})).snapshots.map((s: { snapshot_id: string }) => s.snapshot_id);
  assert.deepEqual(names, ["mid_game"]);
  assert.equal((await call(second.snap, "LoadSnapshot", { snapshot_id: "mid_game" })).success, true);
  assert.ok((await screenshot(second.ctl)).equals(shot));
  assert.deepEqual(second.device.android.appState(), state);
  assert.equal((await sh(second.device.android, "getprop ro.serialno")).out, `${second.device.serial}\n`, "the device keeps its own serial");

  const other = await rig.start({ snapshotDir: dir, screen: { width: 480, height: 800 } });
  assert.deepEqual((await call(other.snap, "ListSnapshots", {})).snapshots, [], "CompatibleOnly (default) leaves it out");
  const listedAll = (await call(other.snap, "ListSnapshots", { statusFilter: SnapshotFilterStatus.All })).snapshots;
  assert.deepEqual(listedAll.map((s: { snapshot_id: string; status: number }) => [s.snapshot_id, s.status]), [["mid_game", SnapshotLoadStatus.Incompatible]]);
  const refused = await call(other.snap, "LoadSnapshot", { snapshot_id: "mid_game" });
  assert.equal(refused.success, false);
  assert.match(Buffer.from(refused.err).toString(), /360x640 device, this one is 480x800/);
});

test("bad names and missing snapshots: success false with a readable err; delete removes", async () => {
  const { snap } = await rig.start();
  for (const bad of ["../escape", "a/b", "", "..", "x".repeat(200)]) {
    const r = await call(snap, "SaveSnapshot", { snapshot_id: bad });
    assert.equal(r.success, false, bad);
    assert.match(Buffer.from(r.err).toString(), /invalid snapshot name/);
  }
  const missing = await call(snap, "LoadSnapshot", { snapshot_id: "nope" });
  assert.equal(missing.success, false);
  assert.match(Buffer.from(missing.err).toString(), /does not exist/);
  assert.equal((await call(snap, "SaveSnapshot", { snapshot_id: "tmp" })).success, true);
  assert.equal((await call(snap, "DeleteSnapshot", { snapshot_id: "tmp" })).success, true);
  assert.deepEqual((await call(snap, "ListSnapshots", {})).snapshots, []);
  assert.equal((await call(snap, "DeleteSnapshot", { snapshot_id: "tmp" })).success, false);
});

test("loading takes the profile's delay (emulator profiles ~0.65 s; instant: none; configurable)", async () => {
  const slow = await rig.start({ latencyProfile: "emulator-adb" });
  assert.equal((await call(slow.snap, "SaveSnapshot", { snapshot_id: "s" })).success, true);
  let t = performance.now();
  assert.equal((await call(slow.snap, "LoadSnapshot", { snapshot_id: "s" })).success, true);
  assert.ok(performance.now() - t >= 600, `emulator profile load took ${performance.now() - t} ms`);

  const configured = await rig.start({ snapshotLoadDelayMs: 300 });
  await configured.device.snapshots.save("s");
  t = performance.now();
  await configured.device.snapshots.load("s");
  assert.ok(performance.now() - t >= 290);

  const instant = await rig.start();
  await instant.device.snapshots.save("s");
  t = performance.now();
  await instant.device.snapshots.load("s");
  assert.ok(performance.now() - t < 500, "instant profile loads without an added delay");
});

test("a finger down over gRPC is forgotten by a snapshot load from any side (here the device API)", async () => {
  const { device, ctl } = await rig.start();
  await installAndStart(device, "sim_notes.apk", NOTES);
  await device.snapshots.save("list");
  await call(ctl, "sendTouch", { touches: [touch(180, 190, 1)] }); // note 0's row, finger stays down
  await device.snapshots.load("list");
  await call(ctl, "sendTouch", { touches: [touch(180, 270, 1)] }); // a new tap on note 1
  await call(ctl, "sendTouch", { touches: [touch(180, 270, 0)] });
  assert.equal((device.android.appState() as { openNote?: number }).openNote, 1);
});
