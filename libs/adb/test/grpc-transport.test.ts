/**
 * The emulator gRPC transport against simulated emulators (gRPC endpoints, discovery files) through a real
 * (private) adb server: which devices use it (discovery files, config with token, off), actions reaching
 * the app (taps, swipes, keys, two fingers), frames over gRPC, and gRPC trouble mapped to the driver's
 * statuses with the endpoint named. A device without gRPC keeps the shell action channel.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import http2 from "node:http2";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { emulatorGrpc, type TouchEventMsg } from "@farm/emulator-grpc";
import { SimEmulator, startSimulatedDevices } from "@farm/simulator";
import { AdbDriver, GrpcActionChannel, type AdbCallEvent, type AdbDevice } from "@farm/adb";
import { INPUT_LIVENESS_MS, ShellActionChannel, grpcKeyOf, readDiscoveryFiles } from "@farm/adb/testing";

const APKS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../tasks/apks");
const G2048 = "com.tpcstld.twozerogame";
const NOTES = "com.farm.simapps.notes";

let adb: LocalAdbServer;
let fleet: Awaited<ReturnType<typeof startSimulatedDevices>>;
let plain: Awaited<ReturnType<typeof startSimulatedDevices>>;
let tokenEmu: SimEmulator;
let runDir: string;
let driver: AdbDriver;
const events: AdbCallEvent[] = [];
const savedXdg = process.env.XDG_RUNTIME_DIR;

async function sh(dev: AdbDevice, line: string): Promise<string> {
  const r = await dev.shell(line, { timeoutMs: 10_000 });
  assert.equal(r.status, "ok", `${line}: ${r.message}`);
  return r.stdout;
}

async function install(dev: AdbDevice, pkg: string, apk: string): Promise<void> {
  const r = await dev.execute({ timeoutSec: 0, cmd: { command: "install_apk", location: { kind: "filesystem", path: path.join(APKS, apk) } } } as never);
  assert.equal(r.status, "ok", r.message);
  const s = await dev.execute({ timeoutSec: 0, cmd: { command: "start_activity", fullActivity: `${pkg}/${pkg}.MainActivity`, extraArgs: [], forceStop: true } } as never);
  assert.equal(s.status, "ok", s.message);
}

before(async () => {
  runDir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-grpc-"));
  // The emulators write their discovery files under $XDG_RUNTIME_DIR/avd/running, as the real one does.
  process.env.XDG_RUNTIME_DIR = runDir;
  adb = await startAdbServer();
  fleet = await startSimulatedDevices({ adbPort: adb.port, count: 2, seed: 5, emulator: {} });
  tokenEmu = await SimEmulator.start({ adbPort: adb.port, seed: 9, grpc: { token: "s3cret-token" } });
  plain = await startSimulatedDevices({ adbPort: adb.port, count: 1, seed: 6 });
  driver = new AdbDriver({ port: adb.port, grpc: { mode: "discover", discoveryDir: path.join(runDir, "avd", "running") }, events: { onCall: (e) => events.push(e) } });
});

after(async () => {
  await driver?.close();
  await fleet?.close();
  await tokenEmu?.close();
  await plain?.close();
  await adb?.close();
  if (savedXdg === undefined) delete process.env.XDG_RUNTIME_DIR;
  else process.env.XDG_RUNTIME_DIR = savedXdg;
  fs.rmSync(runDir, { recursive: true, force: true });
});

describe("gRPC transport", () => {
  test("endpoints come from the emulators' discovery files (with the token); a bare adb device has none", () => {
    const found = readDiscoveryFiles(path.join(runDir, "avd", "running"));
    for (const e of fleet.emulators) assert.equal(found.get(e.serial)?.address, `127.0.0.1:${e.grpc!.port}`);
    assert.equal(found.get(tokenEmu.serial)?.token, "s3cret-token");
    assert.equal(driver.device(plain.devices[0]!.serial).grpcEndpoint(), undefined);
    assert.equal(new AdbDriver({ port: adb.port }).device(fleet.emulators[0]!.serial).grpcEndpoint(), undefined, "off by default");
  });

  test("taps and swipes over gRPC reach the app; keys too", async () => {
    const dev = driver.device(fleet.emulators[0]!.serial);
    await install(dev, G2048, "classic_2048.apk");
    const ch = await dev.openActionChannel();
    assert.ok(ch instanceof GrpcActionChannel, "a device with gRPC gets the gRPC channel");
    const before = await dev.screenshot();
    assert.ok("rgba" in before);
    for (const [x1, y1, x2, y2] of [[100, 300, 300, 300], [180, 200, 180, 500], [300, 300, 60, 300], [180, 500, 180, 150]] as const) {
      const r = await ch.swipe(x1, y1, x2, y2, 60);
      assert.equal(r.status, "ok", r.message);
    }
    const after = await dev.screenshot();
    assert.ok("rgba" in after);
    assert.ok(!Buffer.from(after.rgba).equals(Buffer.from(before.rgba)), "four swipes did not move a tile (2048 moves tiles on swipes only)");
    // BACK over gRPC leaves the game.
    assert.equal((await ch.keyEvent("KEYCODE_BACK")).status, "ok");
    await new Promise((r) => setTimeout(r, 200));
    assert.doesNotMatch(await sh(dev, "dumpsys activity activities | grep mResumedActivity"), /twozerogame/);
    assert.ok(events.some((e) => e.op === "action:swipe" && e.serial === dev.serial && e.status === "ok"));
    await ch.close();
  });

  test("two fingers: touches carry their finger ids", async () => {
    const dev = driver.device(fleet.emulators[1]!.serial);
    await install(dev, NOTES, "sim_notes.apk");
    const ch = (await dev.openActionChannel()) as GrpcActionChannel;
    for (const r of [await ch.touchDown(50, 50, 0), await ch.touchDown(200, 200, 1), await ch.touchMove(60, 60, 0), await ch.touchUp(60, 60, 0), await ch.touchUp(200, 200, 1)]) assert.equal(r.status, "ok", r.message);
    const bad = await ch.touchDown(-1, 5);
    assert.equal(bad.status, "failed_precondition");
    await ch.close();
  });

  test("frames over gRPC equal the framebuffer the adb server gives", async () => {
    const dev = driver.device(fleet.emulators[1]!.serial);
    const viaGrpc = await dev.frame({ raw: true, timeoutMs: 10_000 });
    assert.ok("width" in viaGrpc && viaGrpc.rgba, JSON.stringify(viaGrpc));
    const viaAdb = await new AdbDriver({ port: adb.port }).device(dev.serial).screenshot();
    assert.ok("rgba" in viaAdb);
    assert.deepEqual([viaGrpc.width, viaGrpc.height], [viaAdb.width, viaAdb.height]);
    assert.ok(Buffer.from(viaGrpc.rgba).equals(Buffer.from(viaAdb.rgba)));
  });

  test("token: the discovery file's token is sent; a wrong configured token is refused as adb_error naming the endpoint", async () => {
    const dev = driver.device(tokenEmu.serial);
    const ch = await dev.openActionChannel();
    assert.ok(ch instanceof GrpcActionChannel);
    assert.equal((await ch.tap(10, 10)).status, "ok");
    await ch.close();
    const address = `127.0.0.1:${tokenEmu.grpc!.port}`;
    const wrong = new AdbDriver({ port: adb.port, grpc: { mode: "config", endpoints: { [tokenEmu.serial]: { address, token: "wrong" } } } });
    const ch2 = await wrong.device(tokenEmu.serial).openActionChannel();
    const r = await ch2.tap(10, 10);
    assert.equal(r.status, "adb_error");
    assert.match(r.message, new RegExp(address.replace(/\./g, "\\.")));
    assert.match(r.message, /token/);
    await ch2.close();
    await wrong.close();
  });

  test("an endpoint nobody serves is adb_error (device lost) naming it, within the deadline", async () => {
    const d = new AdbDriver({ port: adb.port, actionTimeoutMs: 2000, grpc: { mode: "config", endpoints: { "emulator-5990": { address: "127.0.0.1:1" } } } });
    const ch = await d.device("emulator-5990").openActionChannel();
    const t0 = performance.now();
    const r = await ch.touchDown(1, 1);
    assert.ok(r.status === "adb_error" || r.status === "timeout", `${r.status}: ${r.message}`);
    assert.match(r.message, /127\.0\.0\.1:1/);
    assert.ok(performance.now() - t0 < 5000);
    await ch.close();
    await d.close();
  });

  test("lean client error paths: a hung emulator is a timeout within the deadline once it has been silent for the liveness interval, a gRPC server that goes away mid-session is adb_error (device lost), both naming the endpoint", async () => {
    const emu = await SimEmulator.start({ adbPort: adb.port, seed: 11, grpc: {} });
    const address = `127.0.0.1:${emu.grpc!.port}`;
    const d = new AdbDriver({ port: adb.port, actionTimeoutMs: 1500, grpc: { mode: "config", endpoints: { [emu.serial]: { address } } } });
    try {
      const ch = await d.device(emu.serial).openActionChannel();
      assert.ok(ch instanceof GrpcActionChannel);
      assert.equal((await ch.tap(10, 10)).status, "ok", "the session is up");
      const shot = await d.device(emu.serial).screenshot();
      assert.ok("rgba" in shot, JSON.stringify(shot));
      emu.setVmStopped(true);
      // Input events stream without answers: a device silent for longer than the liveness interval is
      // asked for its status (within the action's deadline) before the next action goes out.
      await new Promise((r) => setTimeout(r, INPUT_LIVENESS_MS + 100));
      const t0 = performance.now();
      const hung = await ch.touchDown(5, 5);
      assert.equal(hung.status, "timeout", hung.message);
      assert.ok(performance.now() - t0 < 6000, "answered near its 1.5 s deadline");
      assert.ok(hung.message.includes(address), hung.message);
      emu.setVmStopped(false);
      assert.equal((await ch.touchUp(5, 5)).status, "ok", "the same session serves again once the emulator runs");
      await emu.grpc!.close();
      // The stream's end reaches the client a moment after the server closes; the action after that fails.
      let gone = await ch.tap(10, 10);
      for (const t1 = performance.now(); gone.status === "ok" && performance.now() - t1 < 3000; ) {
        await new Promise((r) => setTimeout(r, 20));
        gone = await ch.tap(10, 10);
      }
      assert.equal(gone.status, "adb_error", gone.message);
      assert.ok(gone.message.includes(address), gone.message);
      assert.match(gone.message, /unavailable|gone/);
      await ch.close();
    } finally {
      await d.close();
      await emu.close();
    }
  });

  test("an emulator without streamInputEvent (older) gets every touch through sendTouch: swipes still move 2048's tiles", async () => {
    const emu = await SimEmulator.start({ adbPort: adb.port, seed: 12, grpc: { withoutInputStream: true } });
    const d = new AdbDriver({ port: adb.port, grpc: { mode: "config", endpoints: { [emu.serial]: { address: `127.0.0.1:${emu.grpc!.port}` } } } });
    try {
      const dev = d.device(emu.serial);
      await install(dev, G2048, "classic_2048.apk");
      const ch = await dev.openActionChannel();
      assert.ok(ch instanceof GrpcActionChannel);
      const before = await dev.screenshot();
      assert.ok("rgba" in before);
      for (const [x1, y1, x2, y2] of [[100, 300, 300, 300], [180, 200, 180, 500], [300, 300, 60, 300], [180, 500, 180, 150]] as const) {
        assert.equal((await ch.swipe(x1, y1, x2, y2, 60)).status, "ok");
      }
      const after = await dev.screenshot();
      assert.ok("rgba" in after);
      assert.ok(!Buffer.from(after.rgba).equals(Buffer.from(before.rgba)), "the swipes did not reach the app");
      await ch.close();
    } finally {
      await d.close();
      await emu.close();
    }
  });

  test("an emulator that refuses streamInputEvent late (after events went on the stream) gets those events replayed, then the next ones, in order", async () => {
    // A bare HTTP/2 gRPC server: getStatus and sendTouch answer OK; streamInputEvent answers UNIMPLEMENTED
    // only 300 ms after it starts, well past the client's wait for the call to be accepted.
    const decodeTouch = emulatorGrpc().services.emulatorController["sendTouch"]!.requestDeserialize as (b: Buffer) => TouchEventMsg;
    const touched: Array<[number, number]> = [];
    const server = http2.createServer();
    const sessions = new Set<http2.ServerHttp2Session>();
    server.on("session", (s) => sessions.add(s));
    server.on("stream", (stream, headers) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      const ok = (): void => {
        stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
        stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end(Buffer.alloc(5));
      };
      const method = String(headers[":path"]).split("/").pop();
      if (method === "streamInputEvent") {
        setTimeout(() => stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": "12" }, { endStream: true }), 300);
        return;
      }
      stream.on("end", () => {
        if (method === "sendTouch") for (const t of decodeTouch(Buffer.concat(chunks).subarray(5)).touches) touched.push([t.x, t.pressure]);
        ok();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const address = `127.0.0.1:${(server.address() as { port: number }).port}`;
    const d = new AdbDriver({ port: adb.port, grpc: { mode: "config", endpoints: { "emulator-5992": { address } } } });
    try {
      const ch = await d.device("emulator-5992").openActionChannel();
      assert.equal((await ch.tap(11, 5)).status, "ok", "written on the stream before the refusal");
      await new Promise((r) => setTimeout(r, 600));
      assert.equal((await ch.tap(22, 5)).status, "ok");
      assert.deepEqual(touched, [[11, 1], [11, 0], [22, 1], [22, 0]]);
      await ch.close();
    } finally {
      await d.close();
      // The client's session is idle, not closed: end ours, or this server keeps the test process alive.
      for (const s of sessions) s.destroy();
      server.close();
    }
  });

  test("a device without gRPC keeps the shell action channel", async () => {
    const ch = await driver.device(plain.devices[0]!.serial).openActionChannel();
    assert.ok(ch instanceof ShellActionChannel);
    assert.equal((await ch.tap(5, 5)).status, "ok");
    await ch.close();
  });

  test("snapshots: saved and loaded over gRPC SnapshotService, and through the console without gRPC; the device state comes back", async () => {
    const dev = driver.device(fleet.emulators[1]!.serial);
    const mark = "/data/local/tmp/farm-snapshot-mark";
    await sh(dev, `echo before > ${mark}`);
    const saved = await dev.snapshot("save", "farm-test-1", { timeoutMs: 20_000 });
    assert.deepEqual([saved.status, saved.via], ["ok", "grpc"], saved.message);
    await sh(dev, `echo after > ${mark}`);
    const loaded = await dev.snapshot("load", "farm-test-1", { timeoutMs: 20_000 });
    assert.deepEqual([loaded.status, loaded.via], ["ok", "grpc"], loaded.message);
    assert.equal((await sh(dev, `cat ${mark}`)).trim(), "before");
    // The same device without gRPC: the console, through the real adb CLI.
    const noGrpc = new AdbDriver({ port: adb.port });
    try {
      const d2 = noGrpc.device(dev.serial);
      await sh(d2, `echo later > ${mark}`);
      const c = await d2.snapshot("load", "farm-test-1", { timeoutMs: 20_000 });
      assert.deepEqual([c.status, c.via], ["ok", "console"], c.message);
      assert.equal((await sh(d2, `cat ${mark}`)).trim(), "before");
      const missing = await d2.snapshot("load", "no-such-snapshot", { timeoutMs: 20_000 });
      assert.equal(missing.status, "internal_error", missing.message);
    } finally {
      await noGrpc.close();
    }
    const missing = await dev.snapshot("load", "no-such-snapshot", { timeoutMs: 20_000 });
    assert.notEqual(missing.status, "ok");
    assert.match(missing.message, /no-such-snapshot/);
    assert.equal((await dev.snapshot("load", "../etc", {})).status, "failed_precondition");
  });

  test("Android key codes map to the emulator's key names; the rest go through adb", () => {
    assert.equal(grpcKeyOf("KEYCODE_BACK"), "GoBack");
    assert.equal(grpcKeyOf("4"), "GoBack");
    assert.equal(grpcKeyOf("KEYCODE_A"), "a");
    assert.equal(grpcKeyOf("KEYCODE_7"), "7");
    assert.equal(grpcKeyOf("KEYCODE_MEDIA_PLAY"), undefined);
  });
});
