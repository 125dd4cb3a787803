/**
 * @module @farm/seeded-random
 * A seeded 32-bit PRNG (mulberry32 family): the same seed gives the same sequence on every machine.
 *
 *   const r = createSeededRandom(42);
 *   r.next();        // [0, 1)
 *   r.int(1, 6);     // 1..6 inclusive
 *   r.pick(["a", "b"]);
 */
export { createSeededRandom, seededRandomFromState, seededRandomStream, seededRandomXor, seedToState, type SeededRandom } from "./seeded-random.ts";
export { episodeSeed, MAX_SEED } from "./episode-seed.ts";
