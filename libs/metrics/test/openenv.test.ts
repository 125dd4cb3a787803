/** OpenEnv sessions on a worker: the open-session gauge, steps, and session ends by reason (every reason declared at 0, unknown ones as "other"). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createFarmMetrics, METRIC } from "../src/index.ts";
import { parseExposition, valueOf } from "./exposition.ts";

test("OpenEnv sessions, steps and ends by reason: zero series from the start, counted, bounded", async () => {
  const m = createFarmMetrics({ service: "t", collectDefault: false });
  let exp = parseExposition(await m.metricsText());
  for (const reason of ["close", "client_lost", "idle_timeout", "shutdown", "error"]) assert.equal(valueOf(exp, METRIC.openenvSessionEnds, { reason }), 0);
  m.openenvSessions(3);
  m.openenvStep();
  m.openenvStep();
  m.openenvSessionEnded("idle_timeout");
  m.openenvSessionEnded("from-json" as never);
  exp = parseExposition(await m.metricsText());
  assert.equal(valueOf(exp, METRIC.openenvSessions, {}), 3);
  assert.equal(valueOf(exp, METRIC.openenvSteps, {}), 2);
  assert.equal(valueOf(exp, METRIC.openenvSessionEnds, { reason: "idle_timeout" }), 1);
  assert.equal(valueOf(exp, METRIC.openenvSessionEnds, { reason: "other" }), 1);
});
