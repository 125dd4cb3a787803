/**
 * Frames through shared memory (the emulator's MMAP image transport) against simulated emulators on this host:
 * stored and raw frames equal the framebuffer, the regions are files in /dev/shm that go when the driver closes
 * (and those of dead processes when the next one starts); an emulator that cannot open the region (another
 * container) gets asked for pixels in the answer, once found out; `sharedFrames: false` keeps the pixels in the answer.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import http2 from "node:http2";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import sharp from "sharp";
import { emulatorGrpc, ImgFormat, type ImageFormatMsg, type ImageMsg } from "@farm/emulator-grpc";
import { rgbaToRgb } from "@farm/frames";
import { createLogger } from "@farm/log";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { AdbDriver } from "@farm/adb";
import { regionDir } from "../src/grpc/shared-frames.ts";

let adb: LocalAdbServer;
let fleet: Awaited<ReturnType<typeof startSimulatedDevices>>;
let endpoints: Record<string, { address: string }>;

const myRegions = () => fs.readdirSync(regionDir()).filter((n) => n.startsWith(`farm-frames-${process.pid}-`));

before(async () => {
  adb = await startAdbServer();
  fleet = await startSimulatedDevices({ adbPort: adb.port, count: 1, seed: 4, screen: { width: 270, height: 480 }, emulator: { discovery: false } });
  const emu = fleet.emulators[0]!;
  endpoints = { [emu.serial]: { address: `127.0.0.1:${emu.grpc!.port}` } };
});

after(async () => {
  await fleet?.close();
  await adb?.close();
});

describe("shared frames", () => {
  test("stored and raw frames through the region equal the framebuffer; the region files go with the driver", async () => {
    const driver = new AdbDriver({ port: adb.port, grpc: { mode: "config", endpoints } });
    const serial = fleet.emulators[0]!.serial;
    const dev = driver.device(serial);
    const shot = await new AdbDriver({ port: adb.port }).device(serial).screenshot();
    assert.ok("rgba" in shot);
    try {
      // The first frame learns the size with the pixels in the answer; the later ones go through the region.
      for (let i = 0; i < 3; i++) {
        const f = await dev.frame({ raw: false, encode: { format: "png" }, timeoutMs: 10_000 });
        assert.ok("width" in f, JSON.stringify(f));
        const { data, info } = await sharp(await f.encoded!).raw().toBuffer({ resolveWithObject: true });
        assert.deepEqual([info.width, info.height, info.channels], [270, 480, 3]);
        assert.ok(data.equals(Buffer.from(rgbaToRgb(shot.rgba, 270, 480))), `stored frame ${i} differs from the framebuffer`);
      }
      assert.ok(myRegions().length >= 1, "a region file exists while the driver runs");
      for (let i = 0; i < 2; i++) {
        const raw = await dev.frame({ raw: true, timeoutMs: 10_000 });
        assert.ok("width" in raw && raw.rgba, JSON.stringify(raw));
        assert.ok(Buffer.from(raw.rgba).equals(Buffer.from(shot.rgba)), `raw frame ${i} differs from the framebuffer`);
        const rgb = await dev.frame({ raw: true, rawFormat: "rgb", encode: { format: "png" }, timeoutMs: 10_000 });
        assert.ok("width" in rgb && rgb.rgb, JSON.stringify(rgb));
        assert.ok(Buffer.from(rgb.rgb).equals(Buffer.from(rgbaToRgb(shot.rgba, 270, 480))), `raw RGB frame ${i} differs from the framebuffer`);
        await rgb.encoded;
      }
    } finally {
      await driver.close();
    }
    assert.deepEqual(myRegions(), [], "closing the driver removes its region files");
  });

  test("region files of a process that died are removed when frame threads start", async () => {
    const deadPid = spawnSync(process.execPath, ["-e", ""]).pid!;
    const stale = path.join(regionDir(), `farm-frames-${deadPid}-1-0`);
    fs.writeFileSync(stale, Buffer.alloc(64));
    const driver = new AdbDriver({ port: adb.port, grpc: { mode: "config", endpoints } });
    try {
      const f = await driver.device(fleet.emulators[0]!.serial).frame({ raw: true, timeoutMs: 10_000 });
      assert.ok("width" in f);
      assert.equal(fs.existsSync(stale), false);
    } finally {
      await driver.close();
      fs.rmSync(stale, { force: true });
    }
  });

  test("sharedFrames: false keeps the pixels in the answer (no region files)", async () => {
    const driver = new AdbDriver({ port: adb.port, grpc: { mode: "config", endpoints, sharedFrames: false } });
    try {
      for (let i = 0; i < 3; i++) assert.ok("width" in (await driver.device(fleet.emulators[0]!.serial).frame({ raw: false, encode: { format: "png" }, timeoutMs: 10_000 })));
      assert.deepEqual(myRegions(), []);
    } finally {
      await driver.close();
    }
  });

  test("an emulator that cannot open the region gets asked through one once, then for pixels in the answer; every frame arrives", async () => {
    // A bare gRPC server playing an emulator in another container: a request naming a region gets an Image
    // with neither pixels nor transport (the emulator's answer when it cannot map the region).
    const method = emulatorGrpc().services.emulatorController["getScreenshot"]!;
    const decodeAsk = method.requestDeserialize as (b: Buffer) => ImageFormatMsg;
    const encodeImage = method.responseSerialize as (m: ImageMsg) => Buffer;
    let viaRegion = 0;
    let inAnswer = 0;
    const server = http2.createServer();
    const sessions = new Set<http2.ServerHttp2Session>();
    server.on("session", (s) => sessions.add(s));
    server.on("stream", (stream) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const ask = decodeAsk(Buffer.concat(chunks).subarray(5));
        const shared = (ask.transport?.channel ?? 0) !== 0;
        if (shared) viaRegion++;
        else inAnswer++;
        const body = encodeImage({ format: { format: ImgFormat.RGB888, width: 2, height: 2 }, width: 2, height: 2, image: shared ? Buffer.alloc(0) : Buffer.alloc(12, 9), seq: 1, timestampUs: 0 });
        const frame = Buffer.alloc(5 + body.length);
        frame.writeUInt32BE(body.length, 1);
        body.copy(frame, 5);
        stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
        stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end(frame);
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const address = `127.0.0.1:${(server.address() as { port: number }).port}`;
    const lines: string[] = [];
    const logger = createLogger({ service: "t", destination: { write: (l: string) => void lines.push(l) } });
    const driver = new AdbDriver({ port: adb.port, logger, grpc: { mode: "config", endpoints: { "emulator-5990": { address } } } });
    try {
      for (let i = 0; i < 4; i++) {
        const f = await driver.device("emulator-5990").frame({ raw: false, encode: { format: "png" }, timeoutMs: 10_000 });
        assert.ok("width" in f, JSON.stringify(f));
        const { data } = await sharp(await f.encoded!).raw().toBuffer({ resolveWithObject: true });
        assert.ok(data.equals(Buffer.alloc(12, 9)), `frame ${i}`);
      }
      assert.deepEqual([viaRegion, inAnswer], [1, 4], "one try through a region, then pixels in the answer");
      const off = lines.map((l) => JSON.parse(l)).filter((l) => l.event === "adb:shared-frames-off");
      assert.deepEqual(off.map((l) => [l.level, l.endpoint]), [[40, address]], "one warning naming the endpoint");
      assert.match(off[0].reason, /could not open the region/);
    } finally {
      await driver.close();
      for (const s of sessions) s.destroy();
      server.close();
    }
  });
});

