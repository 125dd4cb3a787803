/** The accessibility hub's refused forwarder streams, by reason: every reason at 0 from the start, an unknown one folded. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createFarmMetrics, METRIC } from "../src/index.ts";
import { parseExposition, valueOf } from "./exposition.ts";

test("forwarder refusals: counted by reason from zero", async () => {
  const m = createFarmMetrics({ service: "t", collectDefault: false });
  let exp = parseExposition(await m.metricsText());
  for (const reason of ["unknown_port", "bad_token", "token_missing", "duplicate"]) assert.equal(valueOf(exp, METRIC.a11yForwarderRefusals, { reason }), 0, reason);
  m.a11yForwarderRefused("bad_token");
  m.a11yForwarderRefused("bad_token");
  m.a11yForwarderRefused("token_missing");
  exp = parseExposition(await m.metricsText());
  assert.equal(valueOf(exp, METRIC.a11yForwarderRefusals, { reason: "bad_token" }), 2);
  assert.equal(valueOf(exp, METRIC.a11yForwarderRefusals, { reason: "token_missing" }), 1);
});
