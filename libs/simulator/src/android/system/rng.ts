// The simulator's seeded PRNG is @farm/seeded-random's seededRandomXor (the stream every seeded run replays).
export { seededRandomXor as simRandom, type SeededRandom } from "@farm/seeded-random";

/** A stable 32-bit hash of a string (FNV-1a), used to derive per-device seeds and fake object ids. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
