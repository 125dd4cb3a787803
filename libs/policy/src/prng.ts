/**
 * A small seeded PRNG (a 32-bit multiply-xorshift generator in the mulberry32 family), written here so
 * the random policy's sequence depends only on our code and the seed, never on a library version.
 */

export interface Prng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
}

/**
 * Folds any finite number (seeds may exceed 32 bits or be negative) into a 32-bit state, mixing
 * high and low halves so seeds that differ only above bit 32 still give different streams.
 */
export function seedToState(seed: number): number {
  if (!Number.isFinite(seed)) throw new Error(`seed must be a finite number, got ${seed}`);
  const whole = Math.trunc(seed);
  const low = whole >>> 0;
  const high = Math.floor(whole / 2 ** 32) >>> 0;
  let h = Math.imul(low ^ 0x9e3779b9, 0x85ebca6b);
  h ^= Math.imul(high + 0x632be5ab, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export function createPrng(seed: number): Prng {
  let state = seedToState(seed);
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
  };
}
