/** farm_build_info: one series, value 1, the farm's version (root package.json) and Node's. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { createFarmMetrics, METRIC } from "../src/index.ts";
import { FARM_VERSION } from "@farm/metrics/testing";

test("farm_build_info carries the repository's version and the Node.js version", async () => {
  const rootVersion = (JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }).version;
  assert.equal(FARM_VERSION, rootVersion);
  const text = await createFarmMetrics({ service: "worker", collectDefault: false }).metricsText();
  const lines = text.split("\n").filter((l) => l.startsWith(`${METRIC.buildInfo}{`));
  assert.deepEqual(lines, [`${METRIC.buildInfo}{version="${rootVersion}",node_version="${process.versions.node}",service="worker"} 1`]);
  const custom = await createFarmMetrics({ service: "scheduler", collectDefault: false, version: "9.9.9-test" }).metricsText();
  assert.match(custom, /^farm_build_info\{version="9\.9\.9-test",.*\} 1$/m);
});
