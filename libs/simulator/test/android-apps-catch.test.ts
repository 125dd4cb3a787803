import { test } from "node:test";
import assert from "node:assert/strict";
import { newDevice, sh, installPrebuilt, rlMessages, rlStartLine, sleep } from "./android-helpers.ts";
import type { SimAndroid } from "../src/android/index.ts";

const COMPONENT = "com.example.catchtheball/com.example.catchtheball.MainActivity";
interface CatchState { lives: number; ball: [number, number]; paddle: [number, number]; over: boolean; ticks: number }
function state(d: SimAndroid): CatchState {
  return d.appState() as CatchState;
}

test("the ball falls in real time without input, and the episode ends when lives run out", async () => {
  const d = newDevice();
  await installPrebuilt(d, "catch_the_ball.apk");
  // A fall takes about 0.15 s at 5 screen heights per second.
  await sh(d, rlStartLine(COMPONENT, '{"lives": 2, "speed": 5, "tick_ms": 10, "paddle_width": 4, "seed": 3}'));
  const y0 = state(d).ball[1];
  await sleep(60);
  assert.ok(state(d).ball[1] > y0 || state(d).lives < 2, "the ball moved without any input");
  const deadline = Date.now() + 5000;
  while (!state(d).over && Date.now() < deadline) await sleep(20);
  assert.ok(state(d).over, "lives ran out");
  const msgs = await rlMessages(d);
  assert.equal(msgs.at(-1), "episode end");
  assert.ok(msgs.includes("extra: lives [2]") && msgs.includes("extra: lives [0]"));
  assert.ok(msgs.includes("extra: paddle_width [4]"));
  assert.ok(msgs.filter((m) => m === "reward: -1").length >= 2);
  for (const m of msgs.filter((x) => /^extra: (ball|paddle) /.test(x))) assert.match(m, /^extra: (ball|paddle) \[\d+, \d+\]$/);
  assert.equal(d.system.activities.foregroundProcess()!.ticking, false, "no timer after game over");
  d.close();
});

test("the paddle follows touch x and catches a ball; HOME pauses the game", async () => {
  const d = newDevice();
  await installPrebuilt(d, "catch_the_ball.apk");
  await sh(d, rlStartLine(COMPONENT, '{"speed": 4, "tick_ms": 10, "seed": 9}'));
  // Keep the paddle under the ball as it falls.
  const deadline = Date.now() + 3000;
  while (!(await rlMessages(d)).includes("reward: 1") && Date.now() < deadline) {
    await sh(d, `input motionevent DOWN ${state(d).ball[0]} 600`);
    await sleep(10);
  }
  assert.ok((await rlMessages(d)).includes("reward: 1"), "caught a ball");
  assert.equal(state(d).lives, 3);
  await sh(d, "input motionevent UP 0 600");
  assert.equal(state(d).paddle[0], 36, "paddle clamps to the left edge (half of the default 72 px width)");
  await sh(d, "input keyevent KEYCODE_HOME");
  const proc = d.system.activities.allTasks()[0]!.process;
  assert.equal(proc.ticking, false, "paused while not in front");
  const app = proc.app as unknown as { state(): CatchState };
  const t = app.state().ticks;
  await sleep(50);
  assert.equal(app.state().ticks, t);
  await sh(d, "am start -n com.example.catchtheball/.MainActivity");
  assert.equal(proc.ticking, true, "resumes when brought back");
  d.close();
  assert.equal(proc.ticking, false, "close() stops timers");
});

test("same seed → same ball positions", async () => {
  const positions = async (): Promise<string[]> => {
    const d = newDevice();
    await installPrebuilt(d, "catch_the_ball.apk");
    await sh(d, rlStartLine(COMPONENT, '{"speed": 8, "tick_ms": 10, "lives": 2, "paddle_width": 4}'));
    while (!state(d).over) await sleep(20);
    const balls = (await rlMessages(d)).filter((m) => m.startsWith("extra: ball [") && m.endsWith(", 11]"));
    d.close();
    return balls;
  };
  const a = await positions();
  assert.ok(a.length >= 2);
  assert.deepEqual(await positions(), a);
});

test("input swipe with a duration moves the paddle over that time", async () => {
  const d = newDevice();
  await installPrebuilt(d, "catch_the_ball.apk");
  await sh(d, rlStartLine(COMPONENT, '{"speed": 0.1}'));
  const t0 = performance.now();
  let finished = false;
  const swipe = sh(d, "input swipe 50 600 310 600 200").then(() => (finished = true));
  const seen: number[] = [];
  while (!finished) {
    seen.push(state(d).paddle[0]);
    await sleep(10);
  }
  await swipe;
  assert.ok(seen.some((x) => x > 50 && x < 310), `paddle seen on its way (${seen.join(", ")})`);
  assert.ok(performance.now() - t0 >= 190);
  assert.equal(state(d).paddle[0], 310, "ends under the UP point (within the 36 px clamp of a 72 px paddle)");
  d.close();
});
