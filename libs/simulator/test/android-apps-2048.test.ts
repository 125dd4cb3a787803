import { test } from "node:test";
import assert from "node:assert/strict";
import { newDevice, sh, installPrebuilt, rlMessages, rlStartLine } from "./android-helpers.ts";
import type { SimAndroid } from "../src/android/index.ts";

const COMPONENT = "com.tpcstld.twozerogame/com.tpcstld.twozerogame.MainActivity";
// up, right, down, left as swipes across the middle of a 360x640 screen
const SWIPES = ["input swipe 180 450 180 150", "input swipe 60 320 300 320", "input swipe 180 150 180 450", "input swipe 300 320 60 320"];

interface Game { grid: number[][]; score: number; over: boolean }
function game(d: SimAndroid): Game {
  return d.appState() as Game;
}

async function play(seedConfig: string, moves: number[]): Promise<{ messages: string[]; final: Game }> {
  const d = newDevice();
  await installPrebuilt(d, "classic_2048.apk");
  await sh(d, "logcat -b all -c");
  assert.equal((await sh(d, rlStartLine(COMPONENT, seedConfig, { forceStop: true }))).code, 0);
  for (const m of moves) await sh(d, SWIPES[m]!);
  const result = { messages: await rlMessages(d), final: game(d) };
  d.close();
  return result;
}

test("score lines agree with the game state after scripted swipes", async () => {
  const moves = [3, 2, 3, 2, 1, 2, 3, 2, 0, 3, 2, 1, 2, 3, 2, 3];
  const { messages, final } = await play("{}", moves);
  const scores = messages.filter((m) => m.startsWith("score: ")).map((m) => Number(m.slice(7)));
  assert.ok(scores.length > 0, "some merges happened");
  assert.equal(scores.at(-1), final.score);
  assert.ok(scores.every((s, i) => i === 0 || s > scores[i - 1]!), "score only grows");
  const grids = messages.filter((m) => m.startsWith("extra: grid "));
  assert.equal(grids.at(-1), `extra: grid ${JSON.stringify(final.grid).replace(/,/g, ", ")}`);
  const dirs = messages.filter((m) => m.startsWith("extra: direction "));
  assert.ok(dirs.length > 0 && dirs.every((m) => /^extra: direction \[[0-3]\]$/.test(m)));
  // Every extra line is a Python literal of the declared shapes: grid [4,4], direction [1].
  for (const g of grids) {
    const v = JSON.parse(g.slice("extra: grid ".length)) as number[][];
    assert.equal(v.length, 4);
    assert.ok(v.every((row) => row.length === 4));
  }
});

test("same seed, same inputs → same game; a different seed → a different game", async () => {
  const moves = [3, 2, 3, 2, 1, 2, 3, 2];
  const a = await play('{"seed": 11}', moves);
  const b = await play('{"seed": 11}', moves);
  const c = await play('{"seed": 12}', moves);
  assert.deepEqual(a.messages, b.messages);
  assert.deepEqual(a.final, b.final);
  assert.notDeepEqual(a.messages, c.messages);
});

test("fresh start after force-stop or pm clear replays the same sequence", async () => {
  const d = newDevice();
  await installPrebuilt(d, "classic_2048.apk");
  const run = async (): Promise<Game> => {
    await sh(d, rlStartLine(COMPONENT, "{}"));
    for (const m of [3, 2, 3, 2]) await sh(d, SWIPES[m]!);
    return game(d);
  };
  const first = await run();
  await sh(d, "am force-stop com.tpcstld.twozerogame");
  assert.deepEqual(await run(), first);
  await sh(d, "pm clear com.tpcstld.twozerogame");
  assert.deepEqual(await run(), first);
  d.close();
});

test("multi-step gesture with motionevent DOWN/MOVE/UP is a swipe; a tap moves nothing", async () => {
  const d = newDevice();
  await installPrebuilt(d, "classic_2048.apk");
  await sh(d, rlStartLine(COMPONENT, '{"seed": 5}'));
  const before = game(d);
  await sh(d, "input tap 180 320");
  assert.deepEqual(game(d), before);
  for (const dir of [3, 2, 1, 0]) {
    const g = game(d);
    const [x1, y1, x2, y2] = ([[180, 450, 180, 150], [60, 320, 300, 320], [180, 150, 180, 450], [300, 320, 60, 320]] as const)[dir]!;
    await sh(d, `input motionevent DOWN ${x1} ${y1}`);
    await sh(d, `input motionevent MOVE ${(x1 + x2) / 2} ${(y1 + y2) / 2}`);
    await sh(d, `input motionevent UP ${x2} ${y2}`);
    if (JSON.stringify(game(d).grid) !== JSON.stringify(g.grid)) {
      assert.equal((await rlMessages(d)).filter((m) => m.startsWith("extra: direction")).at(-1), `extra: direction [${dir}]`);
      d.close();
      return;
    }
  }
  assert.fail("no motionevent gesture moved the board");
});

test("episode end once no move is possible; without RL_TASK_ENABLED nothing is logged", async () => {
  const d = newDevice();
  await installPrebuilt(d, "classic_2048.apk");
  await sh(d, rlStartLine(COMPONENT, '{"seed": 1}'));
  for (let i = 0; i < 3000 && !game(d).over; i++) await sh(d, SWIPES[i % 4 === 3 ? 0 : i % 3]!);
  assert.ok(game(d).over, "game over reached");
  const msgs = await rlMessages(d);
  assert.equal(msgs.at(-1), "episode end");
  await sh(d, "logcat -c; am start -S -n com.tpcstld.twozerogame/.MainActivity");
  await sh(d, SWIPES[3]!);
  await sh(d, SWIPES[2]!);
  assert.deepEqual(await rlMessages(d), []);
  d.close();
});
