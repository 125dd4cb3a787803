import { seededRandomFromState } from "@farm/seeded-random";

/**
 * The seeded PRNG (@farm/seeded-random) for choices the task makes (start_random_activity), its state
 * mixed from the seed as it always was, so a seed picks the same activities as before.
 */
export function seededRng(seed: number): () => number {
  const r = seededRandomFromState((Math.trunc(seed) ^ 0x9e3779b9) >>> 0);
  return () => r.next();
}
