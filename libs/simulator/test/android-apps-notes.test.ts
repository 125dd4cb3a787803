import { test } from "node:test";
import assert from "node:assert/strict";
import { newDevice, sh, installPrebuilt, rlMessages, rlStartLine, PIN_LINE } from "./android-helpers.ts";
import type { SimAndroid } from "../src/android/index.ts";

const MAIN = "com.farm.simapps.notes/com.farm.simapps.notes.MainActivity";
const NOTE = "com.farm.simapps.notes/com.farm.simapps.notes.NoteActivity";
const LAUNCHER = "com.android.launcher3/com.android.launcher3.Launcher";
// Centres of the tap regions on 360x640 (see src/apps/sim-notes.ts).
const NOTE_Y = [144, 272, 400];
const EXIT = "input tap 180 544";
const BACK_BUTTON = "input tap 72 576";

async function current(d: SimAndroid): Promise<string | undefined> {
  return /.*\{(.*)\}/.exec((await sh(d, "am stack list | grep -E visible=true")).out)?.[1];
}

async function pin(d: SimAndroid, activity: string): Promise<void> {
  const id = (await sh(d, "am stack list")).out.split("\n").map((l) => PIN_LINE.exec(l)?.groups).find((g) => g?.base_activity === activity || g?.top_activity === activity)?.id;
  assert.ok(id, "task to pin");
  assert.equal((await sh(d, `am task lock ${id}`)).code, 0);
}

async function started(): Promise<SimAndroid> {
  const d = newDevice();
  await installPrebuilt(d, "sim_notes.apk");
  await sh(d, rlStartLine(MAIN, "{}", { forceStop: true }));
  return d;
}

test("wrong note: -0.1 and json_extra; target note: reward 1 and episode end; Back button returns", async () => {
  const d = await started();
  await sh(d, `input tap 180 ${NOTE_Y[0]}`);
  assert.equal(await current(d), NOTE);
  assert.deepEqual(await rlMessages(d), ['json_extra: {"opened": 0}', "reward: -0.1"]);
  await sh(d, BACK_BUTTON);
  assert.equal(await current(d), MAIN);
  await sh(d, `input tap 180 ${NOTE_Y[2]}`);
  assert.deepEqual((await rlMessages(d)).slice(2), ['json_extra: {"opened": 2}', "reward: 1", "episode end"]);
  await sh(d, "input keyevent KEYCODE_BACK");
  assert.equal(await current(d), MAIN, "BACK from a note returns to the list");
  d.close();
});

test("target from RL_TASK_GAME_CONFIG", async () => {
  const d = newDevice();
  await installPrebuilt(d, "sim_notes.apk");
  await sh(d, rlStartLine(MAIN, '{"target": 0}'));
  await sh(d, `input tap 180 ${NOTE_Y[0]}`);
  assert.deepEqual((await rlMessages(d)).slice(1), ["reward: 1", "episode end"]);
  d.close();
});

test("the agent can leave the app: BACK, HOME and Exit reach the launcher", async () => {
  for (const leave of ["input keyevent KEYCODE_BACK", "input keyevent KEYCODE_HOME", "input keyevent 3", EXIT]) {
    const d = await started();
    await sh(d, leave);
    assert.equal(await current(d), LAUNCHER, leave);
    d.close();
  }
});

test("screen pinning keeps the agent in the app until unlocked", async () => {
  const d = await started();
  await pin(d, MAIN);
  assert.match((await sh(d, "dumpsys window")).out, /mLockTaskModeState=PINNED/);
  for (const attempt of ["input keyevent KEYCODE_BACK", "input keyevent KEYCODE_HOME", EXIT]) {
    await sh(d, attempt);
    assert.equal(await current(d), MAIN, attempt);
  }
  await sh(d, `input tap 180 ${NOTE_Y[1]}`);
  await sh(d, "input keyevent KEYCODE_BACK");
  assert.equal(await current(d), MAIN, "BACK inside the app still works");
  await sh(d, "am task lock stop");
  await sh(d, "input keyevent KEYCODE_HOME");
  assert.equal(await current(d), LAUNCHER);
  assert.notEqual((await sh(d, "am task lock 9999")).code, 0);
  d.close();
});

test("from the launcher, tapping the app icon brings it back (without RL lines)", async () => {
  const d = await started();
  await sh(d, "input keyevent KEYCODE_HOME");
  await sh(d, "am force-stop com.farm.simapps.notes");
  // Launcher icons: the 3rd launchable package (Clock, Settings, Sim Notes…) sits in column 2 of row 0.
  const labels = d.system.packages.list().filter((p) => p.activities.length && p.name !== "com.android.launcher3").map((p) => p.name);
  const k = labels.indexOf("com.farm.simapps.notes");
  await sh(d, `input tap ${Math.round((0.05 + 0.225 * (k % 4) + 0.1) * 360)} ${Math.round((0.15 + 0.16 * Math.floor(k / 4) + 0.05) * 640)}`);
  assert.equal(await current(d), MAIN);
  d.close();
});

test("SimAndroid helpers: installApk, currentActivity, appState", async () => {
  const { readFileSync } = await import("node:fs");
  const { APK_DIR } = await import("./android-helpers.ts");
  const d = newDevice();
  assert.deepEqual(d.installApk(new Uint8Array(readFileSync(new URL("sim_notes.apk", APK_DIR)))), { ok: true, packageName: "com.farm.simapps.notes" });
  assert.deepEqual(d.installApk(new TextEncoder().encode("junk")), { ok: false, code: "INSTALL_FAILED_INVALID_APK" });
  assert.equal(d.currentActivity(), LAUNCHER);
  assert.equal(d.appState(), undefined);
  await sh(d, rlStartLine(MAIN, '{"target": 1}'));
  assert.equal(d.currentActivity(), MAIN);
  assert.deepEqual(d.appState(), { activity: "MainActivity", openNote: undefined, target: 1, solved: false });
  d.close();
});
