/** Issue 41's metrics: committed episodes' final scores by task and result, and the scoring time; results outside the set are "other". */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createFarmMetrics, METRIC } from "../src/index.ts";
import { parseExposition, valueOf } from "./exposition.ts";

test("episode scores by task and result, with the scoring time; bounded labels, bad numbers dropped", async () => {
  const m = createFarmMetrics({ service: "t", collectDefault: false });
  m.episodeScored("wifi_set", "success", 0.12);
  m.episodeScored("wifi_set", "success", 0.3);
  m.episodeScored("wifi_set", "failure", 0.2);
  m.episodeScored("notes_add", "error");
  m.episodeScored("notes_add", "maybe" as never, Number.NaN);
  const exp = parseExposition(await m.metricsText());
  assert.equal(valueOf(exp, METRIC.episodeScores, { task: "wifi_set", result: "success" }), 2);
  assert.equal(valueOf(exp, METRIC.episodeScores, { task: "wifi_set", result: "failure" }), 1);
  assert.equal(valueOf(exp, METRIC.episodeScores, { task: "notes_add", result: "error" }), 1);
  assert.equal(valueOf(exp, METRIC.episodeScores, { task: "notes_add", result: "other" }), 1);
  assert.equal(valueOf(exp, `${METRIC.episodeScoreDuration}_count`, {}), 3);
  assert.equal(valueOf(exp, METRIC.invalidValues, { metric: METRIC.episodeScoreDuration }), 1);
});
