import { test } from "node:test";
import assert from "node:assert/strict";
import { newDevice, sh, installPrebuilt, rlStartLine } from "./android-helpers.ts";
import { LATENCY_PROFILES } from "../src/android/index.ts";

const NOTES = "com.farm.simapps.notes/com.farm.simapps.notes.MainActivity";

test("latency profiles add delay per command class", async () => {
  const d = newDevice();
  assert.equal(d.faults.latencyMs("input"), 0);
  d.faults.setLatencyProfile("emulator-adb");
  assert.equal(d.faults.latencyMs("input"), LATENCY_PROFILES["emulator-adb"].input);
  assert.equal(d.faults.latencyMs("framebuffer"), LATENCY_PROFILES["emulator-adb"].screencap);
  assert.equal(d.faults.latencyMs("something-else"), LATENCY_PROFILES["emulator-adb"].shell);
  let t0 = performance.now();
  await sh(d, "input keyevent 0");
  assert.ok(performance.now() - t0 >= 55, "input is slow over adb");
  t0 = performance.now();
  await sh(d, "echo && screencap -p 2>/dev/null");
  assert.ok(performance.now() - t0 >= 95, "screencap is slower still");
  d.faults.setLatencyProfile("emulator-grpc");
  assert.equal(d.faults.latencyMs("input"), 6);
  assert.equal(d.faults.latencyMs("screencap"), 20);
  assert.equal(d.faults.latencyMs("am"), LATENCY_PROFILES["emulator-adb"].am, "adb commands keep their cost");
  d.faults.setLatencyProfile("instant");
  for (const cls of ["input", "screencap", "am", "pm", "settings", "dumpsys", "shell"]) assert.equal(d.faults.latencyMs(cls), 0);
  assert.throws(() => d.faults.setLatencyProfile("nope" as "instant"));
  d.close();
});

test("crashApp: the app dies with a FATAL EXCEPTION and leaves the foreground", async () => {
  const d = newDevice();
  await installPrebuilt(d, "sim_notes.apk");
  await sh(d, rlStartLine(NOTES, "{}"));
  await sh(d, "am task lock 12");
  d.faults.crashApp();
  const visible = (await sh(d, "am stack list | grep -E visible=true")).out;
  assert.match(visible, /com\.android\.launcher3\.Launcher\}$/m);
  const crash = (await sh(d, "logcat -d -v epoch AndroidRuntime:E *:S")).out;
  assert.match(crash, /^ +\d+\.\d{3} +\d+ +\d+ E AndroidRuntime: FATAL EXCEPTION: main$/m);
  assert.match(crash, /Process: com\.farm\.simapps\.notes, PID: \d+/);
  assert.equal(d.system.activities.lockedTaskId(), undefined, "pinning ends with the task");
  d.faults.crashApp(); // nothing in front: no-op
  d.close();
});

test("dropped taps: with rate 1 every input event is ignored; a seeded rate drops reproducibly", async () => {
  const d = newDevice();
  await installPrebuilt(d, "sim_notes.apk");
  await sh(d, rlStartLine(NOTES, "{}"));
  d.faults.setTapDropRate(1);
  await sh(d, "input tap 180 144");
  await sh(d, "input keyevent KEYCODE_HOME");
  assert.match((await sh(d, "am stack list | grep -E visible=true")).out, /notes\.MainActivity\}/);
  assert.throws(() => d.faults.setTapDropRate(2));
  // A dropped DOWN makes the rest of that gesture inconsistent: its MOVE/UP are discarded, no tap happens.
  await sh(d, "input motionevent DOWN 180 144");
  d.faults.setTapDropRate(0);
  await sh(d, "input motionevent UP 180 144");
  assert.match((await sh(d, "am stack list | grep -E visible=true")).out, /notes\.MainActivity\}/);

  const pattern = async (seed: number): Promise<boolean[]> => {
    const dev = newDevice(seed);
    await installPrebuilt(dev, "sim_notes.apk");
    await sh(dev, rlStartLine(NOTES, "{}"));
    dev.faults.setTapDropRate(0.5);
    const out: boolean[] = [];
    for (let i = 0; i < 16; i++) {
      await sh(dev, "input tap 180 144"); // opens note 0 unless dropped
      const opened = /NoteActivity/.test((await sh(dev, "am stack list | grep -E visible=true")).out);
      out.push(opened);
      if (opened) dev.system.input.key(4); // back to the list (may itself be dropped)
      while (/NoteActivity/.test((await sh(dev, "am stack list | grep -E visible=true")).out)) dev.system.input.key(4);
    }
    dev.close();
    return out;
  };
  const a = await pattern(42);
  assert.ok(a.includes(true) && a.includes(false), "some taps dropped, some not");
  assert.deepEqual(await pattern(42), a);
  d.close();
});
