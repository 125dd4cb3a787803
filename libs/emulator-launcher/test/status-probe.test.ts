/** The launcher's probes against a simulated emulator: gRPC getStatus / setVmState and the adb fallback, and their failures as data. */
import assert from "node:assert/strict";
import test from "node:test";
import { freePort, startAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { pollUntil } from "@farm/time";
import { adbStatusProbe, grpcStatusProbe } from "@farm/emulator-launcher/testing";

test("status probes: booted over gRPC and over adb; nobody there is an error naming where; setVmState SHUTDOWN stops the emulator", async () => {
  const adb = await startAdbServer();
  const fleet = await startSimulatedDevices({ adbPort: adb.port, count: 1, emulator: {} });
  const server = { host: "127.0.0.1", port: adb.port };
  const probes = [];
  try {
    const serial = fleet.devices[0]!.serial;
    const grpcPort = fleet.emulators[0]!.grpc!.port;
    const g = grpcStatusProbe(grpcPort);
    const a = adbStatusProbe(server, serial);
    const missingAdb = adbStatusProbe(server, "emulator-9990");
    const missingGrpc = grpcStatusProbe(await freePort());
    probes.push(g, a, missingAdb, missingGrpc);
    assert.deepEqual(await g.probe(10_000), { ok: true, booted: true });
    assert.deepEqual(await a.probe(10_000), { ok: true, booted: true });
    const m = await missingAdb.probe(10_000);
    assert.ok(!m.ok && /emulator-9990/.test(m.error) && /not found/.test(m.error), JSON.stringify(m));
    const n = await missingGrpc.probe(5_000);
    assert.ok(!n.ok && /getStatus/.test(n.error), JSON.stringify(n));
    assert.equal(await missingGrpc.requestShutdown(2_000), false);
    assert.equal(await g.requestShutdown(10_000), true);
    const gone = await pollUntil(async () => !(await a.probe(2_000)).ok, { timeoutMs: 15_000, intervalMs: 100 });
    assert.ok(gone, "the device stopped answering after SHUTDOWN");
  } finally {
    for (const p of probes) p.close();
    await fleet.close();
    await adb.close();
  }
});
