/**
 * The seeded random policy: a baseline that plays taps and swipes anywhere on the screen.
 *
 * Gesture mix (defaults): each new gesture is a swipe with probability `swipeProbability` (0.3),
 * otherwise a tap.
 *   - tap:   TOUCH(p), LIFT                      with p uniform in [0,1]²
 *   - swipe: TOUCH(p0), TOUCH(p1) … TOUCH(pk), LIFT   — k+1 = `swipeTouches` touches (3…8, uniform),
 *            start and end uniform in [0,1]², the touches in between evenly spaced on the line,
 *            so the runner turns it into one down/move…/up stroke.
 * One action per `act()`; a gesture spans consecutive calls and always ends with LIFT.
 *
 * Reproducibility: the stream depends only on the seed. `reset(ctx)` reseeds from `ctx.seed` (and
 * drops any gesture in progress), so the same seed gives the same actions whatever the observations.
 * Before the first reset the `seed` option (default 0) is used.
 */
import { createSeededRandom, type SeededRandom } from "@farm/seeded-random";
import { lift, touch } from "./action.ts";
import type { Action, EpisodeContext, Policy } from "./types.ts";

export interface RandomPolicyOptions {
  /** Seed used until the first `reset`; every reset reseeds from the episode's seed. Default 0. */
  seed?: number;
  /** Probability that a new gesture is a swipe rather than a tap, in [0, 1]. Default 0.3. */
  swipeProbability?: number;
  /** Touches per swipe (inclusive range, each ≥ 2). Default [3, 8]. */
  swipeTouches?: [number, number];
}

/** Bump when the action stream for a given seed changes, so trajectories say which algorithm made them. */
export const RANDOM_POLICY_VERSION = "1";

export function randomPolicy(opts: RandomPolicyOptions = {}): Policy<Action> {
  const swipeProbability = opts.swipeProbability ?? 0.3;
  const [minTouches, maxTouches] = opts.swipeTouches ?? [3, 8];
  if (!(swipeProbability >= 0 && swipeProbability <= 1)) {
    throw new RangeError(`randomPolicy: swipeProbability must be in [0, 1], got ${swipeProbability}`);
  }
  if (!Number.isInteger(minTouches) || !Number.isInteger(maxTouches) || minTouches < 2 || maxTouches < minTouches) {
    throw new RangeError(`randomPolicy: swipeTouches must be integers [min, max] with 2 ≤ min ≤ max, got [${minTouches}, ${maxTouches}]`);
  }

  let prng: SeededRandom = createSeededRandom(opts.seed ?? 0);
  // Actions of the gesture in progress, emitted one per act().
  let pending: Action[] = [];

  const point = (): [number, number] => [prng.next(), prng.next()];

  const nextGesture = (): Action[] => {
    if (prng.next() >= swipeProbability) {
      const [x, y] = point();
      return [touch(x, y), lift()];
    }
    const [x0, y0] = point();
    const [x1, y1] = point();
    const n = prng.int(minTouches, maxTouches);
    const gesture: Action[] = [];
    for (let i = 0; i < n; i++) {
      const t = i / (n - 1);
      gesture.push(touch(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t));
    }
    gesture.push(lift());
    return gesture;
  };

  return {
    name: "random",
    version: RANDOM_POLICY_VERSION,
    needsPixels: false,
    async reset(ctx: EpisodeContext) {
      prng = createSeededRandom(ctx.seed);
      pending = [];
    },
    async act() {
      if (pending.length === 0) pending = nextGesture();
      return pending.shift()!;
    },
    async close() {},
  };
}
