import assert from "node:assert/strict";
import { test } from "node:test";
import { createSeededRandom, seededRandomFromState, seededRandomStream, seededRandomXor, seedToState } from "@farm/seeded-random";

test("a seed gives a fixed sequence (pinned values: the random policy's stream depends on them)", () => {
  const r = createSeededRandom(42);
  assert.deepEqual([r.next(), r.next(), r.next()], [0.35879189684055746, 0.7296520897652954, 0.3797737779095769]);
  const big = createSeededRandom(2 ** 40 + 3);
  assert.deepEqual([big.next(), big.next()], [0.48446474643424153, 0.6945972971152514]);
});

test("same seed, same sequence; seeds that differ only above bit 32 or in sign differ", () => {
  const take = (seed: number) => {
    const r = createSeededRandom(seed);
    return Array.from({ length: 20 }, () => r.next());
  };
  assert.deepEqual(take(7), take(7));
  assert.notDeepEqual(take(7), take(7 + 2 ** 32));
  assert.notDeepEqual(take(7), take(-7));
  assert.throws(() => createSeededRandom(Number.NaN), /finite/);
  assert.equal(seedToState(7), seedToState(7.9), "fractions are truncated");
});

test("seededRandomFromState starts from the raw 32-bit state", () => {
  const a = seededRandomFromState(5);
  const b = seededRandomFromState(5 + 2 ** 32);
  assert.deepEqual([a.next(), a.next()], [b.next(), b.next()]);
  const c = seededRandomFromState(seedToState(42));
  assert.equal(c.next(), 0.35879189684055746);
});

test("next is in [0, 1); int is in [min, max] inclusive and reaches both ends; pick draws from the array", () => {
  const r = createSeededRandom(1);
  const ints = new Set<number>();
  const picks = new Set<string>();
  for (let i = 0; i < 5000; i++) {
    const x = r.next();
    assert.ok(x >= 0 && x < 1);
    const n = r.int(-2, 3);
    assert.ok(Number.isInteger(n) && n >= -2 && n <= 3);
    ints.add(n);
    picks.add(r.pick(["a", "b", "c"]));
  }
  assert.deepEqual([...ints].sort((a, b) => a - b), [-2, -1, 0, 1, 2, 3]);
  assert.deepEqual([...picks].sort(), ["a", "b", "c"]);
  assert.throws(() => r.pick([]), /empty/);
});

test("getState/setState: a saved state replays the same sequence", () => {
  const r = createSeededRandom(99);
  r.next();
  const saved = r.getState();
  const a = [r.next(), r.int(1, 100), r.next()];
  r.next();
  r.setState(saved);
  assert.deepEqual([r.next(), r.int(1, 100), r.next()], a);
});

test("seededRandomXor keeps the simulator's and the episode runner's streams (pinned values: seeded runs replay)", () => {
  const two = (seed: number) => {
    const r = seededRandomXor(seed);
    return [r.next(), r.next()];
  };
  assert.deepEqual(two(0), [0.3588899802416563, 0.10590326134115458]);
  assert.deepEqual(two(5555), [0.43429978704079986, 0.5794829339720309]);
  assert.deepEqual(two(2 ** 31 + 7), [0.40009170211851597, 0.598999579437077]);
  assert.deepEqual(two(-3), [0.014378171181306243, 0.36883880756795406]);
  const r = seededRandomXor(1);
  const next = r.next; // the episode runner takes the bare function
  assert.equal(next(), 0.18967728852294385);
  assert.throws(() => seededRandomXor(Number.POSITIVE_INFINITY), /finite/);
});

test("seededRandomStream: one sequence per (seed, name), the same every time, others for other names or seeds", () => {
  const seq = (r: { next(): number }) => Array.from({ length: 5 }, () => r.next());
  assert.deepEqual(seq(seededRandomStream(7, "title")), seq(seededRandomStream(7, "title")));
  assert.notDeepEqual(seq(seededRandomStream(7, "title")), seq(seededRandomStream(7, "body")));
  assert.notDeepEqual(seq(seededRandomStream(7, "title")), seq(seededRandomStream(8, "title")));
  // Pinned: parameters drawn for episode i must not change between farm versions (task families).
  const pinned = seededRandomStream(0, "state");
  assert.deepEqual([pinned.next(), pinned.next()], [0.8809808620717376,0.6155950203537941]);
});
