/** Server restarts and per-device faults: hang, dropped connection, reconnect. */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import adbkit from "@devicefarmer/adbkit";
import { PREBUILT_APKS, buildSimApk } from "@farm/simulator/testing";
import { adbCli, eventually, startRig, type Rig } from "./transport-helpers.ts";

const { Adb } = adbkit;

let rig: Rig;
before(async () => {
  rig = await startRig(4);
});
after(async () => {
  await rig?.close();
});

/** Serials the adb server lists, in any state (device, offline, …). */
async function listedSerials(): Promise<Map<string, string>> {
  try {
    const list = await Adb.createClient({ port: rig.adb.port }).listDevices();
    return new Map(list.map((d) => [d.id, d.type as string]));
  } catch {
    return new Map();
  }
}

async function onlineSerials(): Promise<Set<string>> {
  return new Set([...(await listedSerials())].filter(([, type]) => type === "device").map(([id]) => id));
}

/** Resolves with the shell output, or "timeout" when nothing arrives within ms. */
async function shellWithin(serial: string, command: string, ms: number): Promise<string> {
  const client = Adb.createClient({ port: rig.adb.port });
  const call = (async () => (await Adb.util.readAll(await client.getDevice(serial).shell(command))).toString())();
  call.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((r) => (timer = setTimeout(() => r("timeout"), ms)));
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

test("adb server restart: every device is back online within 2 s, without restarting devices", async (t) => {
  const serials = rig.fleet.devices.map((d) => d.serial);
  const killedAt = Date.now();
  await rig.adb.restart(); // stops the server (devices see their transport close) and starts a new one
  const answeredAt = Date.now();
  const allBack = await eventually(async () => {
    const online = await onlineSerials();
    return serials.every((s) => online.has(s));
  }, 2000);
  assert.ok(allBack, `not all devices back within 2 s: ${[...(await onlineSerials())].join(",")}`);
  t.diagnostic(`all ${serials.length} devices back ${Date.now() - answeredAt} ms after the new server answered (${Date.now() - killedAt} ms after the old one was stopped)`);
  assert.equal(await shellWithin(serials[0]!, "echo back", 5000), "back\n");
});

test("hang: the device stops answering; releasing it answers the pending call", async () => {
  const sim = rig.fleet.devices[1]!;
  sim.faults.hang(true);
  try {
    assert.equal(await shellWithin(sim.serial, "echo frozen", 500), "timeout");
  } finally {
    sim.faults.hang(false);
  }
  assert.equal(await shellWithin(sim.serial, "echo thawed", 5000), "thawed\n");
});

test("dropConnection: the device disappears and stays away; reconnect brings it back", async () => {
  const sim = rig.fleet.devices[2]!;
  sim.faults.dropConnection();
  assert.ok(await eventually(async () => !(await listedSerials()).has(sim.serial), 3000), "still listed after drop");
  // Longer than a re-registration cycle and than adb's own reconnect attempt (about 1.25 s).
  await new Promise((r) => setTimeout(r, 1500));
  assert.ok(!(await listedSerials()).has(sim.serial), "listed again although dropped");
  sim.faults.reconnect();
  assert.ok(await eventually(async () => (await onlineSerials()).has(sim.serial), 3000), "not back after reconnect");
  assert.equal(await shellWithin(sim.serial, "echo again", 5000), "again\n");
});

test("latency profile can change while running; framebuffer: still answers under it", async () => {
  const sim = rig.fleet.devices[3]!;
  const client = Adb.createClient({ port: rig.adb.port });
  sim.faults.setLatencyProfile("emulator-adb");
  assert.ok(sim.android.faults.latencyMs("framebuffer") > 0);
  const frame = await Adb.util.readAll(await client.getDevice(sim.serial).framebuffer("raw"));
  const { width, height } = sim.android.framebuffer();
  assert.equal(frame.length, width * height * 4);
  sim.faults.setLatencyProfile("instant");
  assert.equal(sim.android.faults.latencyMs("framebuffer"), 0);
});

test("crashApp and tap drop rate reach the simulated Android of that device", async () => {
  const sim = rig.fleet.devices[0]!;
  const cli = (args: string[], input?: Uint8Array) => adbCli(rig.adb.port, sim.serial, args, input ? { input } : {});
  const { spec } = PREBUILT_APKS[0]!;
  const apk = buildSimApk(spec);
  // Put the APK straight into the device's files (adb install itself is covered in transport-cli).
  sim.android.fs.write("/data/local/tmp/app.apk", apk, 0o100644, 0);
  assert.equal((await cli(["shell", "pm", "install", "-r", "/data/local/tmp/app.apk"])).stdout.toString(), "Success\n");
  assert.equal((await cli(["shell", "am", "start", "-W", "-n", `${spec.packageName}/${spec.activities[0]}`])).code, 0);
  sim.faults.crashApp();
  const crash = (await cli(["logcat", "-d", "-b", "crash"])).stdout.toString();
  assert.match(crash, /FATAL EXCEPTION/);
  assert.throws(() => sim.faults.setTapDropRate(2), /\[0, 1\]/);
  sim.faults.setTapDropRate(0);
});

test("close() is idempotent and removes the device from the server", async () => {
  const sim = rig.fleet.devices[3]!;
  await sim.close();
  await sim.close();
  assert.ok(await eventually(async () => !(await listedSerials()).has(sim.serial), 3000));
});
