/**
 * One seeded PRNG: the generator and the ways a seed becomes its state are written once, in
 * @farm/seeded-random. A generator elsewhere (the mulberry32 increment, an xorshift32 step) or a wrapper that
 * mixes a seed into seededRandomFromState by itself is a second stream a reader cannot find. Tests may.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { patternSites, withTree } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** mulberry32's increment, an xorshift32 step (<< 13 … >>> 17), or seededRandomFromState of a seed mixed by XOR. */
const PRNG = /0x6d2b79f5|<<\s*13\b[\s\S]{0,80}?>>>?\s*17\b|seededRandomFromState\([^;]{0,80}?\^/gi;

/** `file:line` of every PRNG or seed-mixing wrapper outside libs/seeded-random. */
export function secondPrngs(root: string): string[] {
  return patternSites(root, PRNG, (rel) => rel.startsWith("libs/seeded-random/"));
}

test("no PRNG or seed-mixing wrapper outside @farm/seeded-random", () => {
  assert.deepEqual(secondPrngs(REPO), [], "use createSeededRandom, seededRandomXor or seededRandomFromState(state) from @farm/seeded-random");
});

test("the rule catches a mulberry32, an xorshift32 and a wrapper, not a plain use", () => {
  withTree("prng-rule-", {
    "libs/x/src/a.ts": "let s = 1;\nexport const next = () => (s = (s + 0x6D2B79F5) >>> 0);\n",
    "libs/x/src/b.ts": "export function xs(x: number) {\n  x ^= x << 13; x ^= x >>> 17; x ^= x << 5;\n  return x;\n}\n",
    "loadtest/src/c.ts": "export const rng = (seed: number) => seededRandomFromState((Math.trunc(seed) ^ 0x9e3779b9) >>> 0);\n",
    "libs/x/src/ok.ts": "export const r = seededRandomFromState(seed);\nexport const q = createSeededRandom(7);\n",
    "libs/seeded-random/src/index.ts": "s = (s + 0x6d2b79f5) >>> 0;\n",
  }, (root) => {
    assert.deepEqual(secondPrngs(root).sort(), ["libs/x/src/a.ts:2", "libs/x/src/b.ts:2", "loadtest/src/c.ts:1"]);
  });
});
