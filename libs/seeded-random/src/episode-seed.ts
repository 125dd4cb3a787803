/** The largest seed (seeds are unsigned 32-bit integers, like the PRNG's state). */
export const MAX_SEED = 2 ** 32 - 1;

/**
 * Seed of episode `index` of a run or campaign with base seed `baseSeed`: base + index, wrapped into 32 bits.
 * One formula for `farm run` and campaigns, so the same (seed, index) replays the same episode anywhere.
 */
export function episodeSeed(baseSeed: number, index: number): number {
  return (baseSeed + index) % 2 ** 32;
}
