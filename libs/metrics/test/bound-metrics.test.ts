/** Bound observers and counters expose exactly what prom-client's own observe / inc would, and survive reset(). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Counter, Histogram, Registry } from "prom-client";
import { boundCounterPerLabels, boundHistogram } from "../src/bound-metrics.ts";

const BUCKETS = [0.001, 0.01, 0.1, 1];
const VALUES = [0, 0.0005, 0.001, 0.002, 0.05, 0.1, 0.7, 3, 12];

function pair(): { plain: Histogram<"phase">; fast: Histogram<"phase">; reg: Registry } {
  const reg = new Registry();
  const plain = new Histogram({ name: "plain_seconds", help: "h", labelNames: ["phase"], buckets: BUCKETS, registers: [reg] });
  const fast = new Histogram({ name: "fast_seconds", help: "h", labelNames: ["phase"], buckets: BUCKETS, registers: [reg] });
  return { plain, fast, reg };
}

const body = async (h: Histogram<"phase">) => (await h.get()).values.map((v) => `${v.metricName?.replace(/^(plain|fast)/, "")}${JSON.stringify(v.labels)}=${v.value}`).sort();

test("bound observations expose the same buckets, sum and count as Histogram.observe", async () => {
  const { plain, fast } = pair();
  const obs = boundHistogram(fast, { phase: "action" }, BUCKETS);
  for (const v of VALUES) {
    plain.observe({ phase: "action" }, v);
    obs(v);
  }
  plain.observe({ phase: "policy" }, 0.2);
  fast.observe({ phase: "policy" }, 0.2); // other label sets keep prom-client's path
  assert.deepEqual(await body(fast), await body(plain));
});

test("after reset() the bound observer starts again from zero", async () => {
  const { plain, fast } = pair();
  const obs = boundHistogram(fast, { phase: "log" }, BUCKETS);
  obs(0.5);
  fast.reset();
  obs(0.05);
  plain.observe({ phase: "log" }, 0.05);
  assert.deepEqual(await body(fast), await body(plain));
});

test("bound counters expose the same values as Counter.inc, per label set, and survive reset()", async () => {
  const reg = new Registry();
  const plain = new Counter({ name: "plain_total", help: "c", labelNames: ["op", "status"], registers: [reg] });
  const fast = new Counter({ name: "fast_total", help: "c", labelNames: ["op", "status"], registers: [reg] });
  const counterOf = boundCounterPerLabels(fast);
  const calls: [string, string][] = [["tap", "ok"], ["tap", "ok"], ["swipe", "ok"], ["tap", "timeout"], ["tap", "ok"]];
  const values = async (c: Counter<"op" | "status">) => (await c.get()).values.map((v) => `${JSON.stringify(v.labels)}=${v.value}`).sort();
  for (const [op, status] of calls) {
    plain.inc({ op, status });
    counterOf({ op, status })();
  }
  assert.deepEqual(await values(fast), await values(plain));
  fast.reset();
  plain.reset();
  counterOf({ op: "tap", status: "ok" })(2);
  plain.inc({ op: "tap", status: "ok" }, 2);
  assert.deepEqual(await values(fast), await values(plain));
});
