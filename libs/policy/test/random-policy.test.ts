import assert from "node:assert/strict";
import { test } from "node:test";
import { randomPolicy, type Action, type Policy } from "../src/index.ts";
import { context, observation } from "./helpers.ts";

async function run(policy: Policy<Action>, seed: number, n: number): Promise<Action[]> {
  await policy.reset(context(seed));
  const out: Action[] = [];
  for (let i = 0; i < n; i++) out.push(await policy.act(observation(i)));
  return out;
}

test("same seed gives the same actions, also across policy instances and resets", async () => {
  const a = await run(randomPolicy(), 42, 500);
  const b = await run(randomPolicy(), 42, 500);
  assert.deepEqual(a, b);
  const p = randomPolicy();
  await run(p, 7, 13); // leave a gesture half done
  assert.deepEqual(await run(p, 42, 500), a, "reset drops the gesture in progress and reseeds");
});

test("different seeds give different actions, including seeds beyond 32 bits", async () => {
  const a = await run(randomPolicy(), 1, 100);
  const b = await run(randomPolicy(), 2, 100);
  assert.notDeepEqual(a, b);
  const c = await run(randomPolicy(), 2 ** 32 + 1, 100);
  assert.notDeepEqual(a, c);
});

test("positions lie in [0,1]² and every touch sequence ends with LIFT", async () => {
  const actions = await run(randomPolicy(), 12345, 5000);
  let touches = 0;
  let taps = 0;
  let swipes = 0;
  for (const a of actions) {
    assert.ok(a.actionType === "TOUCH" || a.actionType === "LIFT", a.actionType);
    const [x, y] = a.touchPosition;
    assert.ok(x >= 0 && x <= 1 && y >= 0 && y <= 1, `position ${x},${y}`);
    if (a.actionType === "TOUCH") touches++;
    else {
      assert.ok(touches >= 1, "LIFT only after at least one TOUCH");
      if (touches === 1) taps++;
      else {
        assert.ok(touches >= 3 && touches <= 8, `swipe of ${touches} touches`);
        swipes++;
      }
      touches = 0;
    }
  }
  // The stream is cut at an arbitrary point; a gesture may be in progress at the end, never longer than a swipe.
  assert.ok(touches <= 8);
  // Default mix is 30 % swipes: a loose band around it.
  const share = swipes / (taps + swipes);
  assert.ok(share > 0.2 && share < 0.4, `swipe share ${share}`);
});

test("positions cover the screen roughly uniformly", async () => {
  const actions = await run(randomPolicy({ swipeProbability: 0 }), 99, 8000);
  const quadrants = [0, 0, 0, 0];
  for (const a of actions) {
    if (a.actionType !== "TOUCH") continue;
    const [x, y] = a.touchPosition;
    quadrants[(x < 0.5 ? 0 : 1) + (y < 0.5 ? 0 : 2)]!++;
  }
  for (const q of quadrants) assert.ok(q > 800 && q < 1200, `quadrant count ${q} of 4000`);
});

test("seed option applies before the first reset; bad options are rejected", async () => {
  const p = randomPolicy({ seed: 5 });
  const first = await p.act(observation());
  const q = randomPolicy();
  await q.reset(context(5));
  assert.deepEqual(await q.act(observation()), first);
  assert.throws(() => randomPolicy({ swipeProbability: 2 }), RangeError);
  assert.throws(() => randomPolicy({ swipeTouches: [1, 3] }), RangeError);
  assert.equal(p.name, "random");
  assert.equal(p.needsPixels, false);
});
