/**
 * A small seeded PRNG (a 32-bit multiply-xorshift generator in the mulberry32 family), written here so
 * every seeded sequence in the farm depends only on our code and the seed, never on a library version.
 */

export interface SeededRandom {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** One element of a non-empty array, uniformly. */
  pick<T>(items: readonly T[]): T;
  /** The generator's whole 32-bit state, so a saved state replays the same sequence (device snapshots). */
  getState(): number;
  /** Continues from a state returned by getState(). */
  setState(state: number): void;
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

/** A generator for `seed` (any finite number, also beyond 32 bits), its state folded by seedToState. */
export function createSeededRandom(seed: number): SeededRandom {
  return seededRandomFromState(seedToState(seed));
}

/**
 * A named stream of a seed: the seed's state mixed with the name (FNV-1a, then a murmur3 finaliser), so each name
 * draws its own sequence for the same seed (task families' parameters: fixing or adding one leaves the others').
 */
export function seededRandomStream(seed: number, name: string): SeededRandom {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  let s = (seedToState(seed) ^ h) >>> 0;
  s = Math.imul(s ^ (s >>> 16), 0x85ebca6b);
  s = Math.imul(s ^ (s >>> 13), 0xc2b2ae35);
  return seededRandomFromState((s ^ (s >>> 16)) >>> 0);
}

/**
 * The stream the simulator (2048 spawns, ball positions, dropped taps) and the episode runner
 * (start_random_activity) have always drawn for a seed: state = (integer part of seed XOR 0x9e3779b9) mod 2^32.
 * One function, so both keep replaying the same runs; new callers take createSeededRandom.
 */
export function seededRandomXor(seed: number): SeededRandom {
  if (!Number.isFinite(seed)) throw new Error(`seed must be a finite number, got ${seed}`);
  return seededRandomFromState((Math.trunc(seed) ^ 0x9e3779b9) >>> 0);
}

/**
 * A generator that starts from a raw 32-bit state (taken modulo 2^32), for callers whose streams are
 * keyed by their own seed mixing and must stay as they were.
 */
export function seededRandomFromState(state: number): SeededRandom {
  let s = state >>> 0;
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error("pick from an empty array");
      return items[Math.floor(next() * items.length)]!;
    },
    getState: () => s,
    setState: (state) => {
      s = state >>> 0;
    },
  };
}
