/** The benchmarks' shared statistics: nearest-rank quantiles and the latency table's fixed layout. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fmtMs, latencyTable, quantile, quantiles } from "../src/stats.ts";

test("quantiles: nearest rank rounded down, over samples in any order; NaN when empty", () => {
  const q = quantiles([5, 1, 4, 2, 3, 10, 9, 8, 7, 6]);
  assert.deepEqual(q, { n: 10, p50: 6, p90: 10, p99: 10, max: 10 });
  assert.equal(quantile([1, 2, 3, 4], 0.25), 2);
  const empty = quantiles([]);
  assert.equal(empty.n, 0);
  assert.ok([empty.p50, empty.p90, empty.p99, empty.max].every(Number.isNaN));
  assert.equal(fmtMs(1.23456), "1.235");
  assert.equal(fmtMs(NaN), "n/a");
});

test("latencyTable: name column, n, err only when rows carry errors, then p50/p90/p99/max ms", () => {
  const q = quantiles([0.5, 1.5, 2.5]);
  assert.deepEqual(latencyTable("path", 10, [{ name: "a", q, errors: 2 }]), [
    `${"path".padEnd(10)} ${"n".padStart(6)} ${"err".padStart(4)} ${"p50 ms".padStart(9)} ${"p90 ms".padStart(9)} ${"p99 ms".padStart(9)} ${"max ms".padStart(9)}`,
    `${"a".padEnd(10)} ${"3".padStart(6)} ${"2".padStart(4)} ${"1.500".padStart(9)} ${"2.500".padStart(9)} ${"2.500".padStart(9)} ${"2.500".padStart(9)}`,
  ]);
  assert.deepEqual(latencyTable("echo", 6, [{ name: "none", q: quantiles([]) }]), [
    `${"echo".padEnd(6)} ${"n".padStart(6)} ${"p50 ms".padStart(9)} ${"p90 ms".padStart(9)} ${"p99 ms".padStart(9)} ${"max ms".padStart(9)}`,
    `${"none".padEnd(6)} ${"0".padStart(6)} ${"n/a".padStart(9)} ${"n/a".padStart(9)} ${"n/a".padStart(9)} ${"n/a".padStart(9)}`,
  ]);
});
