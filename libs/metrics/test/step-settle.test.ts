/** Issue 36's metrics: a step's settle time by policy kind and capped, the capped settles counted; labels bounded. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createFarmMetrics, METRIC } from "../src/index.ts";
import { parseExposition, valueOf } from "./exposition.ts";

test("settle time by policy and capped, capped settles counted, an unknown policy as other", async () => {
  const m = createFarmMetrics({ service: "t", collectDefault: false });
  m.stepSettle("events", 0.4, false);
  m.stepSettle("events", 0.6, false);
  m.stepSettle("events", 6, true);
  m.stepSettle("androidworld", 3.1, false);
  m.stepSettle("made-up", 1, true);
  const exp = parseExposition(await m.metricsText());
  assert.equal(valueOf(exp, `${METRIC.stepSettle}_count`, { policy: "events", capped: "false" }), 2);
  assert.equal(valueOf(exp, `${METRIC.stepSettle}_count`, { policy: "events", capped: "true" }), 1);
  assert.equal(valueOf(exp, `${METRIC.stepSettle}_sum`, { policy: "androidworld", capped: "false" }), 3.1);
  assert.equal(valueOf(exp, METRIC.settlesCapped, { policy: "events" }), 1);
  assert.equal(valueOf(exp, METRIC.settlesCapped, { policy: "other" }), 1);
});
