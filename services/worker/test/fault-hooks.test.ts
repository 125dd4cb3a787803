/** Fault injection is off unless asked for, fires exactly at the n-th time, and refuses typos. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { faultHooksFrom } from "../src/fault-hooks.ts";

test("no FARM_FAULT_INJECT: nothing armed, nothing fires", () => {
  let killed = 0;
  const h = faultHooksFrom(undefined, () => killed++);
  for (let i = 0; i < 5; i++) h.at("crash-after-claim");
  assert.deepEqual([h.armed, killed], [[], 0]);
});

test("a point fires at its n-th passage only; a typo is an error naming the valid points", () => {
  const fired: number[] = [];
  let n = 0;
  const h = faultHooksFrom("crash-after-claim:3, crash-after-publish", () => fired.push(n));
  for (n = 1; n <= 5; n++) h.at("crash-after-claim");
  assert.deepEqual(fired, [3]);
  h.at("crash-after-publish");
  assert.equal(fired.length, 2);
  assert.throws(() => faultHooksFrom("crash-after-comit"), /crash-after-publish, crash-after-claim/);
});
