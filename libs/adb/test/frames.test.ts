/**
 * `Device.frame()` through a real (private) adb server against a simulated device: captured in the
 * driver's frame threads, the raw pixels equal `screenshot()`, the encoding decodes to the same screen,
 * device trouble comes back as the same statuses as the rest of the driver (naming device and server).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import sharp from "sharp";
import { rgbaToRgb } from "@farm/frames";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { AdbDriver, type AdbCallEvent, type AdbDevice } from "@farm/adb";

let adb: LocalAdbServer;
let sims: Awaited<ReturnType<typeof startSimulatedDevices>>;
let driver: AdbDriver;
let dev: AdbDevice;
const events: AdbCallEvent[] = [];

before(async () => {
  adb = await startAdbServer();
  sims = await startSimulatedDevices({ adbPort: adb.port, count: 1, seed: 3, screen: { width: 270, height: 480 } });
  driver = new AdbDriver({ port: adb.port, events: { onCall: (e) => events.push(e) } });
  dev = driver.device(sims.devices[0]!.serial);
  assert.equal((await dev.waitBootComplete(30_000)).status, "ok");
});

after(async () => {
  await driver?.close();
  await sims?.close();
  await adb?.close();
});

describe("Device.frame", () => {
  test("raw pixels are the framebuffer; the PNG encoding decodes to the same screen", async () => {
    const shot = await dev.screenshot();
    assert.ok("rgba" in shot, JSON.stringify(shot));
    const f = await dev.frame({ raw: true, encode: { format: "png" } });
    assert.ok("width" in f, JSON.stringify(f));
    assert.deepEqual([f.width, f.height], [270, 480]);
    assert.ok(f.rgba && Buffer.from(f.rgba).equals(Buffer.from(shot.rgba)), "frame pixels differ from the screenshot");
    const png = await f.encoded!;
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height], [270, 480]);
    assert.ok(data.equals(Buffer.from(rgbaToRgb(shot.rgba, 270, 480))));
    assert.ok(events.some((e) => e.op === "frame" && e.status === "ok" && e.serial === dev.serial));
  });

  test("raw RGB pixels (rawFormat rgb) are the framebuffer without its alpha, converted in the frame thread", async () => {
    const shot = await dev.screenshot();
    assert.ok("rgba" in shot, JSON.stringify(shot));
    const f = await dev.frame({ raw: true, rawFormat: "rgb", encode: { format: "png" } });
    assert.ok("width" in f && f.rgb, JSON.stringify(f));
    assert.equal(f.rgba, undefined);
    assert.ok(Buffer.from(f.rgb).equals(Buffer.from(rgbaToRgb(shot.rgba, 270, 480))));
    const { data } = await sharp(await f.encoded!).raw().toBuffer({ resolveWithObject: true });
    assert.ok(data.equals(Buffer.from(f.rgb)), "the stored frame shows the same screen");
  });

  test("only what is asked for: no pixels without raw, no encoding without a spec", async () => {
    const a = await dev.frame({ raw: false, encode: { format: "jpeg", quality: 70, size: { width: 135, height: 240 } } });
    assert.ok("width" in a && a.rgba === undefined && a.encoded);
    const meta = await sharp(await a.encoded!).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ["jpeg", 135, 240]);
    const b = await dev.frame({ raw: true });
    assert.ok("width" in b && b.rgba && b.encoded === undefined);
  });

  test("many frames at once from the threads all arrive", async () => {
    const all = await Promise.all(Array.from({ length: 12 }, () => dev.frame({ raw: false, encode: { format: "webp", quality: 50 } })));
    for (const f of all) {
      assert.ok("width" in f, JSON.stringify(f));
      assert.equal((await sharp(await f.encoded!).metadata()).format, "webp");
    }
  });

  test("an unknown device is adb_error naming the device and the server", async () => {
    const r = await driver.device("emulator-5998").frame({ raw: true, timeoutMs: 5000 });
    assert.ok(!("width" in r));
    assert.equal(r.status, "adb_error");
    assert.match(r.message, /emulator-5998/);
    assert.match(r.message, new RegExp(`127\\.0\\.0\\.1:${adb.port}`));
  });

  test("a hung device is a timeout within the deadline", async () => {
    const sim = sims.devices[0]!;
    sim.faults.hang(true);
    try {
      const t0 = performance.now();
      const r = await dev.frame({ raw: true, timeoutMs: 400 });
      const dt = performance.now() - t0;
      assert.ok(!("width" in r) && r.status === "timeout", JSON.stringify(r));
      assert.ok(dt < 3000, `took ${dt} ms for a 400 ms deadline`);
    } finally {
      sim.faults.hang(false);
    }
    const again = await dev.frame({ raw: true, timeoutMs: 5000 });
    assert.ok("width" in again, JSON.stringify(again));
  });

  test("an adb server that is gone is adb_error", async () => {
    const other = new AdbDriver({ port: 1, frameThreads: 1 });
    try {
      const r = await other.device("emulator-5554").frame({ raw: true, timeoutMs: 3000 });
      assert.ok(!("width" in r) && r.status === "adb_error", JSON.stringify(r));
      assert.match(r.message, /127\.0\.0\.1:1/);
    } finally {
      await other.close();
    }
  });
});
