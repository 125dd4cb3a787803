/** One Device contract, two implementations: the driver over a simulated emulator (real adb server) and FakeDevice. */
import { after, before } from "node:test";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { AdbDriver, FakeDevice, type Device } from "@farm/adb";
import { deviceConformance } from "./conformance.ts";

let adb: LocalAdbServer;
let sims: Awaited<ReturnType<typeof startSimulatedDevices>>;
let driver: AdbDriver;
let simDevice: Device;

before(async () => {
  adb = await startAdbServer();
  sims = await startSimulatedDevices({ adbPort: adb.port, count: 1, seed: 11 });
  driver = new AdbDriver({ port: adb.port, defaultTimeoutMs: 10_000, queryTimeoutMs: 5000, actionTimeoutMs: 2000 });
  simDevice = driver.device(sims.devices[0]!.serial);
});

after(async () => {
  await driver?.close();
  await sims?.close();
  await adb?.close();
});

deviceConformance("AdbDevice over a simulated emulator", () => ({
  device: () => simDevice,
  hang: (on) => sims.devices[0]!.faults.hang(on),
}));

const fake = new FakeDevice();
deviceConformance("FakeDevice", () => ({ device: () => fake, hang: (on) => fake.hang(on) }));
