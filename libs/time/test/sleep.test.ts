import { test } from "node:test";
import assert from "node:assert/strict";
import { sleep } from "../src/index.ts";

test("sleep waits about ms (never less)", async () => {
  const t0 = performance.now();
  await sleep(50);
  assert.ok(performance.now() - t0 >= 45);
});

test("an abort ends the wait early without throwing; an aborted signal or ms <= 0 returns at once", async () => {
  const ac = new AbortController();
  const t0 = performance.now();
  setTimeout(() => ac.abort(), 20);
  await sleep(60_000, ac.signal);
  assert.ok(performance.now() - t0 < 30_000);
  const t1 = performance.now();
  await sleep(60_000, ac.signal);
  await sleep(0);
  await sleep(-5);
  await sleep(Number.NaN);
  assert.ok(performance.now() - t1 < 30_000);
});
