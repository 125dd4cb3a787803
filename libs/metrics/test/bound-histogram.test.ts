/** The bound step-phase observer exposes exactly what prom-client's own observe would, and survives reset(). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Histogram, Registry } from "prom-client";
import { boundHistogram } from "../src/bound-histogram.ts";

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
