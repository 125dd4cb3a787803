/** The metrics of issue 10's launcher and transports: closed label sets, zero series from the start, overflow to "other". */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createFarmMetrics, METRIC } from "../src/index.ts";
import { parseExposition, valueOf } from "./exposition.ts";

test("relaunches by cause, snapshot fallbacks by reason and devices by transport", async () => {
  const m = createFarmMetrics({ service: "t", collectDefault: false });
  let exp = parseExposition(await m.metricsText());
  for (const cause of ["exited", "hung", "boot_timeout"]) assert.equal(valueOf(exp, METRIC.emulatorRelaunches, { cause }), 0);
  assert.equal(valueOf(exp, METRIC.snapshotFallbacks, { reason: "timeout" }), 0);
  m.emulatorRelaunch("hung");
  m.emulatorRelaunch("hung");
  m.emulatorRelaunch("meteor" as never);
  m.snapshotFallback("adb_error");
  m.setDeviceTransports({ grpc: 3, adb: 1 });
  m.setDeviceTransports({ grpc: 2 });
  exp = parseExposition(await m.metricsText());
  assert.equal(valueOf(exp, METRIC.emulatorRelaunches, { cause: "hung" }), 2);
  assert.equal(valueOf(exp, METRIC.emulatorRelaunches, { cause: "other" }), 1);
  assert.equal(valueOf(exp, METRIC.snapshotFallbacks, { reason: "adb_error" }), 1);
  assert.equal(valueOf(exp, METRIC.deviceTransports, { transport: "grpc" }), 2);
  assert.equal(valueOf(exp, METRIC.deviceTransports, { transport: "adb" }), 0, "replaced, not added");
});
