/** Issue 28's metrics: model tokens by kind and the policy's own latency, from a step's policyUsage. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createFarmMetrics, METRIC } from "../src/index.ts";
import { parseExposition, valueOf } from "./exposition.ts";

test("policy usage: tokens by kind from zero, latency observed in seconds, bad numbers dropped and counted", async () => {
  const m = createFarmMetrics({ service: "t", collectDefault: false });
  let exp = parseExposition(await m.metricsText());
  assert.equal(valueOf(exp, METRIC.policyTokens, { kind: "prompt" }), 0);
  assert.equal(valueOf(exp, METRIC.policyTokens, { kind: "completion" }), 0);
  m.policyUsage({ promptTokens: 1200, completionTokens: 30, latencyMs: 80 });
  m.policyUsage({ promptTokens: 800, latencyMs: 3000 });
  m.policyUsage({ promptTokens: -5, completionTokens: Number.NaN });
  exp = parseExposition(await m.metricsText());
  assert.equal(valueOf(exp, METRIC.policyTokens, { kind: "prompt" }), 2000);
  assert.equal(valueOf(exp, METRIC.policyTokens, { kind: "completion" }), 30);
  assert.equal(valueOf(exp, `${METRIC.policyLatency}_count`), 2);
  assert.equal(valueOf(exp, `${METRIC.policyLatency}_bucket`, { le: "0.1" }), 1);
  assert.equal(valueOf(exp, `${METRIC.policyLatency}_sum`), 3.08);
  assert.equal(valueOf(exp, METRIC.invalidValues, { metric: METRIC.policyTokens }), 2);
});
