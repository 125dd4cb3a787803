/**
 * EmulatorController over real gRPC (@grpc/grpc-js clients) against simulated devices: status,
 * screenshots in every format (matching the framebuffer, following the rotation; into a shared region with the
 * MMAP transport), touches that
 * reach apps as the taps and swipes `input` produces, two fingers, keys, mouse, VM state, token
 * auth, and UNIMPLEMENTED for what is not served.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { PNG } from "pngjs";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { grpc, ImgFormat, KeyCodeType, KeyEventType, RunState, TransportChannel } from "@farm/emulator-grpc";
import { adbServerDevices } from "@farm/local-services";
import { sh } from "./android-helpers.ts";
import { eventually } from "./transport-helpers.ts";
import { call, installAndStart, startGrpcRig, touch, CATCH, G2048, NOTES, type GrpcRig } from "./grpc-helpers.ts";

let rig: GrpcRig;
before(async () => {
  rig = await startGrpcRig();
});
after(async () => {
  await rig.close();
});

test("getStatus: booted, uptime, screen in hardwareConfig; getVmState RUNNING", async () => {
  const { ctl } = await rig.start({ screen: { width: 320, height: 480 } });
  const st = await call(ctl, "getStatus", {});
  assert.equal(st.booted, true);
  assert.ok(st.uptime >= 0 && st.uptime < 60_000, `uptime ${st.uptime}`);
  const hw = new Map<string, string>(st.hardwareConfig.entry.map((e: { key: string; value: string }) => [e.key, e.value]));
  assert.equal(hw.get("hw.lcd.width"), "320");
  assert.equal(hw.get("hw.lcd.height"), "480");
  assert.equal((await call(ctl, "getVmState", {})).state, RunState.RUNNING);
});

test("getScreenshot: RGBA8888 / RGB888 / PNG match the framebuffer; scaling fills format.width/height", async () => {
  const { device, ctl } = await rig.start();
  await installAndStart(device, "classic_2048.apk", G2048);
  const fb = device.android.framebuffer();
  const rgba = await call(ctl, "getScreenshot", { format: ImgFormat.RGBA8888 });
  assert.equal(rgba.format.width, 360);
  assert.equal(rgba.format.height, 640);
  assert.equal(rgba.image.length, 360 * 640 * 4);
  assert.ok(Buffer.from(fb.rgba).equals(rgba.image), "RGBA8888 is the framebuffer");

  const rgb = await call(ctl, "getScreenshot", { format: ImgFormat.RGB888 });
  assert.equal(rgb.image.length, 360 * 640 * 3);
  for (const i of [0, 1000, 360 * 320 + 180, 360 * 640 - 1]) {
    assert.deepEqual([...rgb.image.subarray(i * 3, i * 3 + 3)], [...fb.rgba.subarray(i * 4, i * 4 + 3)], `pixel ${i}`);
  }

  const png = await call(ctl, "getScreenshot", { format: ImgFormat.PNG });
  const decoded = PNG.sync.read(png.image);
  assert.equal(decoded.width, 360);
  assert.ok(Buffer.from(fb.rgba).equals(decoded.data), "PNG decodes to the framebuffer");

  const half = await call(ctl, "getScreenshot", { format: ImgFormat.RGBA8888, width: 180, height: 320 });
  assert.deepEqual([half.format.width, half.format.height, half.image.length], [180, 320, 180 * 320 * 4]);
  const oneSide = await call(ctl, "getScreenshot", { format: ImgFormat.RGBA8888, width: 90 });
  assert.deepEqual([oneSide.format.width, oneSide.format.height], [90, 160]);
});

test("getScreenshot follows every change of the screen: RGB888 and RGBA8888 of the same moment agree, before and after keys move the tiles", async () => {
  const { device, ctl } = await rig.start();
  await installAndStart(device, "classic_2048.apk", G2048);
  const shot = async () => {
    const rgb = await call(ctl, "getScreenshot", { format: ImgFormat.RGB888 });
    const rgba = await call(ctl, "getScreenshot", { format: ImgFormat.RGBA8888 });
    const fb = device.android.framebuffer().rgba;
    assert.ok(Buffer.from(fb).equals(rgba.image), "RGBA8888 is the framebuffer");
    for (let i = 0; i < 360 * 640; i += 97) assert.deepEqual([...rgb.image.subarray(i * 3, i * 3 + 3)], [...fb.subarray(i * 4, i * 4 + 3)], `pixel ${i}`);
    return Buffer.from(rgb.image);
  };
  const first = await shot();
  assert.ok(first.equals(await shot()), "an unchanged screen gives the same pixels");
  let moved = first;
  for (const keyCode of [0xff51, 0xff52, 0xff53, 0xff54]) {
    await call(ctl, "sendKey", { codeType: KeyCodeType.XKB, eventType: KeyEventType.keypress, keyCode });
    moved = await shot();
    if (!moved.equals(first)) break;
  }
  assert.ok(!moved.equals(first), "a move shows in the next screenshot");
});

test("getScreenshot with the MMAP transport writes the pixels into the client's region and echoes the transport; a region it cannot use gets neither", async (t) => {
  const { device, ctl } = await rig.start();
  await installAndStart(device, "classic_2048.apk", G2048);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sim-mmap-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const region = path.join(dir, "region");
  fs.writeFileSync(region, Buffer.alloc(360 * 640 * 4 + 16, 0xee));
  const mmap = (handle: string, format: number = ImgFormat.RGB888) => call(ctl, "getScreenshot", { format, transport: { channel: TransportChannel.MMAP, handle } });

  for (const [format, bpp] of [[ImgFormat.RGB888, 3], [ImgFormat.RGBA8888, 4]] as const) {
    const inAnswer = await call(ctl, "getScreenshot", { format });
    const shared = await mmap(`file://${region}`, format);
    assert.equal(shared.image.length, 0, "no pixels in the answer");
    assert.deepEqual([shared.format.width, shared.format.height], [360, 640]);
    assert.deepEqual([shared.format.transport?.channel, shared.format.transport?.handle], [TransportChannel.MMAP, `file://${region}`]);
    const written = fs.readFileSync(region);
    assert.ok(written.subarray(0, 360 * 640 * bpp).equals(inAnswer.image), `the region holds the ${bpp === 3 ? "RGB888" : "RGBA8888"} pixels`);
  }
  assert.equal(fs.statSync(region).size, 360 * 640 * 4 + 16, "the region is neither grown nor truncated");

  const small = path.join(dir, "small");
  fs.writeFileSync(small, Buffer.alloc(100));
  fs.symlinkSync(region, path.join(dir, "link"));
  // Outside shared memory and the temp folder, big enough: a request must not overwrite it.
  const outsideDir = makeOutsideAllowedDir();
  t.after(() => fs.rmSync(outsideDir, { recursive: true, force: true }));
  const outside = path.join(outsideDir, "region");
  fs.writeFileSync(outside, Buffer.alloc(360 * 640 * 4, 7));
  const before = fs.readFileSync(outside);
  for (const handle of [`file://${path.join(dir, "missing")}`, `file://${small}`, `file://${path.join(dir, "link")}`, `file://${dir}`, `file://${outside}`, "relative/path", ""]) {
    const r = await mmap(handle);
    assert.equal(r.image.length, 0, handle);
    assert.equal(r.format.transport ?? null, null, `${handle}: no transport echoed`);
  }
  assert.equal(fs.existsSync(path.join(dir, "missing")), false, "a missing region is not created");
  assert.ok(fs.readFileSync(outside).equals(before), "a file outside /dev/shm and the temp folder is left alone");
  assert.deepEqual([...fs.readFileSync(small)], [...Buffer.alloc(100)], "a small region is left alone");
  // PNG's length is unknown beforehand: it always comes in the answer.
  const png = await mmap(`file://${region}`, ImgFormat.PNG);
  assert.equal(PNG.sync.read(png.image).width, 360);
});

test("screenshots follow the orientation (gRPC, screencap, framebuffer) and touches map into the rotated display", async () => {
  const { device, ctl } = await rig.start();
  await installAndStart(device, "sim_notes.apk", NOTES);
  await sh(device.android, "settings put system user_rotation 1");
  const img = await call(ctl, "getScreenshot", { format: ImgFormat.RGBA8888 });
  assert.deepEqual([img.format.width, img.format.height], [640, 360]);
  assert.equal(img.format.rotation.rotation, 1);
  const raw = (await sh(device.android, "screencap")).bytes;
  assert.deepEqual([Buffer.from(raw).readUInt32LE(0), Buffer.from(raw).readUInt32LE(4)], [640, 360]);
  assert.ok(Buffer.from(raw.subarray(12)).equals(img.image), "screencap shows what gRPC shows");
  const fb = device.android.framebuffer();
  assert.deepEqual([fb.width, fb.height], [640, 360]);
  // Note 1's row centre (180, 270) in the portrait frame is (270, 179) on the display turned by 90°.
  await call(ctl, "sendTouch", { touches: [touch(270, 179, 1)] });
  await call(ctl, "sendTouch", { touches: [touch(270, 179, 0)] });
  assert.equal((device.android.appState() as { openNote?: number }).openNote, 1);
  await sh(device.android, "settings put system user_rotation 0");
  assert.equal((await call(ctl, "getScreenshot", { format: ImgFormat.RGBA8888 })).format.width, 360);
});

test("sendTouch: a swipe reaches the app exactly as `input swipe` does; an all-zero touch with no finger down does nothing", async () => {
  const viaAdb = await rig.start({ seed: 5 });
  const viaGrpc = await rig.start({ seed: 5 });
  await installAndStart(viaAdb.device, "classic_2048.apk", G2048);
  await installAndStart(viaGrpc.device, "classic_2048.apk", G2048);
  const swipes: [number, number, number, number][] = [[300, 320, 60, 320], [180, 150, 180, 450], [60, 320, 300, 320], [180, 450, 180, 150]];
  for (const [x1, y1, x2, y2] of swipes) {
    await sh(viaAdb.device.android, `input swipe ${x1} ${y1} ${x2} ${y2}`);
    await call(viaGrpc.ctl, "sendTouch", { touches: [touch(x1, y1, 1)] });
    for (let i = 1; i <= 4; i++) await call(viaGrpc.ctl, "sendTouch", { touches: [touch(x1 + ((x2 - x1) * i) / 4, y1 + ((y2 - y1) * i) / 4, 1)] });
    await call(viaGrpc.ctl, "sendTouch", { touches: [touch(x2, y2, 0)] });
  }
  const state = viaGrpc.device.android.appState() as { grid: number[][]; score: number };
  assert.deepEqual(state, viaAdb.device.android.appState());
  assert.notDeepEqual(state.grid.flat().filter((v) => v > 0).length, 2, "the board moved");
  const before = JSON.stringify(viaGrpc.device.android.appState());
  const logBefore = (await sh(viaGrpc.device.android, "logcat -d")).out;
  await call(viaGrpc.ctl, "sendTouch", { touches: [touch(0, 0, 0)] });
  await call(viaGrpc.ctl, "sendTouch", { touches: [{}] });
  assert.equal(JSON.stringify(viaGrpc.device.android.appState()), before);
  assert.equal((await sh(viaGrpc.device.android, "logcat -d")).out, logBefore, "nothing happened on the device");
});

test("sendTouch: a tap opens a note (Sim Notes), like `input tap`; sendMouse clicks too", async () => {
  const { device, ctl } = await rig.start();
  await installAndStart(device, "sim_notes.apk", NOTES);
  // note 1's row: x in [18, 342), y in [224, 320) on 360x640
  await call(ctl, "sendTouch", { touches: [touch(180, 270, 1)] });
  await call(ctl, "sendTouch", { touches: [touch(180, 270, 0)] });
  assert.equal((device.android.appState() as { openNote?: number }).openNote, 1);
  // Back button: x in [18, 126), y in [544, 608)
  await call(ctl, "sendMouse", { x: 60, y: 570, buttons: 1 });
  await call(ctl, "sendMouse", { x: 60, y: 570, buttons: 0 });
  assert.equal((device.android.appState() as { openNote?: number }).openNote, undefined);
});

test("sendTouch: two fingers (identifiers) each reach the app; lifting one leaves the other down", async () => {
  const { device, ctl } = await rig.start();
  await installAndStart(device, "catch_the_ball.apk", CATCH, JSON.stringify({ tick_ms: 1000, speed: 0.01 }));
  const paddle = (): number => (device.android.appState() as { paddle: [number, number] }).paddle[0];
  await call(ctl, "sendTouch", { touches: [touch(60, 500, 1, 0), touch(300, 500, 1, 1)] });
  assert.equal(paddle(), 300, "the second finger moved the paddle");
  await call(ctl, "sendTouch", { touches: [touch(300, 500, 0, 1)] });
  await call(ctl, "sendTouch", { touches: [touch(100, 500, 1, 0)] });
  assert.equal(paddle(), 100, "the first finger is still down and moving");
  await call(ctl, "sendTouch", { touches: [touch(100, 500, 0, 0)] });
  await call(ctl, "sendTouch", { touches: [touch(250, 500, 0, 0)] });
  assert.equal(paddle(), 100, "a lift of a finger that is up does nothing");
});

test("sendKey: XKB, Evdev, Usb and W3C key names reach the app like `input keyevent`; keyup alone does nothing", async () => {
  const viaAdb = await rig.start({ seed: 9 });
  const viaGrpc = await rig.start({ seed: 9 });
  await installAndStart(viaAdb.device, "classic_2048.apk", G2048);
  await installAndStart(viaGrpc.device, "classic_2048.apk", G2048);
  for (const code of [21, 20, 22, 19]) await sh(viaAdb.device.android, `input keyevent ${code}`);
  await call(viaGrpc.ctl, "sendKey", { codeType: KeyCodeType.XKB, eventType: KeyEventType.keypress, keyCode: 0xff51 }); // Left
  await call(viaGrpc.ctl, "sendKey", { codeType: KeyCodeType.Evdev, eventType: KeyEventType.keydown, keyCode: 108 }); // KEY_DOWN
  await call(viaGrpc.ctl, "sendKey", { codeType: KeyCodeType.Evdev, eventType: KeyEventType.keyup, keyCode: 108 });
  await call(viaGrpc.ctl, "sendKey", { eventType: KeyEventType.keypress, key: "ArrowRight" });
  const beforeUp = JSON.stringify(viaGrpc.device.android.appState());
  await call(viaGrpc.ctl, "sendKey", { codeType: KeyCodeType.XKB, eventType: KeyEventType.keyup, keyCode: 0xff52 });
  assert.equal(JSON.stringify(viaGrpc.device.android.appState()), beforeUp, "keyup alone moves nothing");
  await call(viaGrpc.ctl, "sendKey", { codeType: KeyCodeType.Usb, eventType: KeyEventType.keydown, keyCode: 0x070052 }); // Up (HID)
  assert.deepEqual(viaGrpc.device.android.appState(), viaAdb.device.android.appState());
  // Android BACK (evdev KEY_BACK) leaves the game for the launcher.
  await call(viaGrpc.ctl, "sendKey", { codeType: KeyCodeType.Evdev, eventType: KeyEventType.keypress, keyCode: 158 });
  assert.equal(viaGrpc.device.android.currentActivity(), "com.android.launcher3/com.android.launcher3.Launcher");
});

test("streamScreenshot: a first frame, then a frame when the screen changes", async () => {
  const { device, ctl } = await rig.start();
  await installAndStart(device, "sim_notes.apk", NOTES);
  const stream = (ctl as unknown as { streamScreenshot(req: unknown): grpc.ClientReadableStream<{ image: Buffer; seq: number }> }).streamScreenshot({ format: ImgFormat.RGBA8888 });
  const frames: Buffer[] = [];
  stream.on("data", (img: { image: Buffer }) => frames.push(img.image));
  stream.on("error", () => undefined);
  assert.ok(await eventually(() => frames.length === 1, 10_000), "first frame");
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(frames.length, 1, "no new frame while nothing changes");
  await sh(device.android, "input tap 180 270");
  assert.ok(await eventually(() => frames.length === 2, 10_000), "a frame after the change");
  assert.ok(!frames[0]!.equals(frames[1]!));
  assert.ok(Buffer.from(device.android.framebuffer().rgba).equals(frames[1]!));
  stream.cancel();
});

test("token auth: without the right bearer token calls are UNAUTHENTICATED; with it they work; no token = open", async () => {
  const secured = await rig.start({ token: "s3cret" });
  await assert.rejects(call(secured.ctl, "getStatus", {}), (e: grpc.ServiceError) => e.code === grpc.status.UNAUTHENTICATED);
  await assert.rejects(call(secured.ctl, "getStatus", {}, "wrong"), (e: grpc.ServiceError) => e.code === grpc.status.UNAUTHENTICATED);
  await assert.rejects(call(secured.snap, "ListSnapshots", {}), (e: grpc.ServiceError) => e.code === grpc.status.UNAUTHENTICATED);
  assert.equal((await call(secured.ctl, "getStatus", {}, "s3cret")).booted, true);
  const open = await rig.start();
  assert.equal((await call(open.ctl, "getStatus", {})).booted, true);
});

test("methods not served answer UNIMPLEMENTED at once (unary and streaming)", async () => {
  const { ctl, snap } = await rig.start();
  for (const [client, method] of [[ctl, "getBattery"], [ctl, "setGps"], [ctl, "getLogcat"], [snap, "TrackProcess"]] as const) {
    await assert.rejects(call(client, method, {}), (e: grpc.ServiceError) => e.code === grpc.status.UNIMPLEMENTED, method);
  }
  const s = (ctl as unknown as { streamAudio(req: unknown): grpc.ClientReadableStream<unknown> }).streamAudio({});
  const code = await new Promise<number>((resolve) => {
    s.on("error", (e: grpc.ServiceError) => resolve(e.code));
    s.on("data", () => undefined);
  });
  assert.equal(code, grpc.status.UNIMPLEMENTED);
});

test("a hung device answers no gRPC call (the client's deadline passes) until it resumes", async () => {
  const { device, ctl } = await rig.start();
  device.faults.hang(true);
  const code = await new Promise<number>((resolve) =>
    ctl["getStatus"]!({}, { deadline: Date.now() + 500 }, (err: grpc.ServiceError | null) => resolve(err ? err.code : grpc.status.OK)),
  );
  assert.equal(code, grpc.status.DEADLINE_EXCEEDED);
  const pending = call(ctl, "getStatus", {});
  device.faults.hang(false);
  assert.equal((await pending).booted, true);
});

test("setVmState(SHUTDOWN) stops the device as an emulator would: OK, then gone from adb and gRPC", async () => {
  const { device, ctl } = await rig.start();
  const serial = device.serial;
  await call(ctl, "setVmState", { state: RunState.SHUTDOWN });
  await device.whenClosed;
  assert.ok(await eventually(async () => !(await adbServerDevices(rig.adb.port)).has(serial), 10_000), "adb server dropped the device");
  await assert.rejects(call(ctl, "getStatus", {}), (e: grpc.ServiceError) => e.code === grpc.status.UNAVAILABLE);
});

/**
 * A new folder outside /dev/shm and the temp folder (the simulator's allowed regions), wherever the checkout
 * lies: the checkout itself when it is not under one of them (a clone under /tmp is), else /var/tmp, $HOME or
 * the working folder, the first that is outside and writable.
 */
function makeOutsideAllowedDir(): string {
  const real = (d: string) => {
    try {
      return fs.realpathSync(d);
    } catch {
      return undefined;
    }
  };
  const allowed = ["/dev/shm", os.tmpdir()].map(real).filter((d): d is string => d !== undefined);
  const inside = (d: string) => allowed.some((a) => d === a || d.startsWith(a + path.sep));
  const candidates = [fileURLToPath(new URL("../../../", import.meta.url)), "/var/tmp", os.homedir(), process.cwd()];
  for (const c of candidates) {
    const r = real(c);
    if (!r || inside(r)) continue;
    try {
      return fs.mkdtempSync(path.join(r, ".sim-mmap-outside-"));
    } catch {
      // not writable here: the next one
    }
  }
  throw new Error(`no writable folder outside ${allowed.join(" and ")} among ${candidates.join(", ")}: the test needs one`);
}
