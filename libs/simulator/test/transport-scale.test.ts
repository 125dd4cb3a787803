/** 64 simulated emulators in this one process against one adb server: all listed, all answer, all survive a server restart. */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import adbkit from "@devicefarmer/adbkit";
import type { Duplex } from "node:stream";
import { adbCli, eventually, startRig, type Rig } from "./transport-helpers.ts";

const { Adb } = adbkit;
const COUNT = 64;

let rig: Rig;
before(async () => {
  rig = await startRig(COUNT);
});
after(async () => {
  await rig?.close();
});

test(`${COUNT} devices: distinct emulator serials, all listed by adb devices -l`, async () => {
  const serials = rig.fleet.devices.map((d) => d.serial);
  assert.equal(new Set(serials).size, COUNT);
  const listed = (await adbCli(rig.adb.port, undefined, ["devices", "-l"])).stdout.toString();
  for (const s of serials) assert.match(listed, new RegExp(`^${s}\\s+device product:`, "m"));
});

test(`${COUNT} devices answer adbkit shell at the same time`, async () => {
  const client = Adb.createClient({ port: rig.adb.port });
  const outputs = await Promise.all(
    rig.fleet.devices.map(async (d) => (await Adb.util.readAll((await client.getDevice(d.serial).shell(`echo ${d.serial}`)) as Duplex)).toString()),
  );
  assert.deepEqual(outputs, rig.fleet.devices.map((d) => `${d.serial}\n`));
});

test(`adb server restart: all ${COUNT} devices back within 2 s`, async (t) => {
  const client = Adb.createClient({ port: rig.adb.port });
  await rig.adb.restart();
  const answeredAt = Date.now();
  const back = await eventually(async () => {
    const list = await client.listDevices().catch(() => []);
    return list.filter((d) => d.type === "device").length === COUNT;
  }, 2000);
  assert.ok(back, "not every device came back within 2 s");
  t.diagnostic(`back ${Date.now() - answeredAt} ms after the new server answered`);
});
