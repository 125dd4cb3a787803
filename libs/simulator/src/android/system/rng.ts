import { seededRandomFromState, type SeededRandom } from "@farm/seeded-random";

export type { SeededRandom };

/**
 * The simulator's seeded PRNG (@farm/seeded-random), its state mixed from the seed as it always was,
 * so every seeded run (2048 spawns, ball positions, dropped taps) replays exactly.
 */
export function simRandom(seed: number): SeededRandom {
  return seededRandomFromState((Math.floor(seed) ^ 0x9e3779b9) >>> 0);
}

/** A stable 32-bit hash of a string (FNV-1a), used to derive per-device seeds and fake object ids. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
