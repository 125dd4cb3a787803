/** Issue 31's metric: episode starts by reset mode and kind, every pair declared at 0, unknown values as "other". */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createFarmMetrics, METRIC } from "../src/index.ts";
import { parseExposition, valueOf } from "./exposition.ts";

test("episode resets by mode and kind: zero series from the start, counted, bounded", async () => {
  const m = createFarmMetrics({ service: "t", collectDefault: false });
  let exp = parseExposition(await m.metricsText());
  for (const mode of ["steps", "setup-snapshot", "start-snapshot"]) for (const kind of ["steps", "snapshot", "start_snapshot", "snapshot_fallback"]) assert.equal(valueOf(exp, METRIC.episodeResets, { mode, kind }), 0);
  m.episodeReset("start-snapshot", "steps");
  m.episodeReset("start-snapshot", "start_snapshot");
  m.episodeReset("start-snapshot", "start_snapshot");
  m.episodeReset("start-snapshot", "snapshot_fallback");
  m.episodeReset("from-json" as never, "weird" as never);
  exp = parseExposition(await m.metricsText());
  assert.equal(valueOf(exp, METRIC.episodeResets, { mode: "start-snapshot", kind: "start_snapshot" }), 2);
  assert.equal(valueOf(exp, METRIC.episodeResets, { mode: "start-snapshot", kind: "snapshot_fallback" }), 1);
  assert.equal(valueOf(exp, METRIC.episodeResets, { mode: "other", kind: "other" }), 1);
});
