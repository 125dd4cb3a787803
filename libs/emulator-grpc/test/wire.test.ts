/**
 * The hand-written encodings agree with the .proto files: what wire.ts encodes, protobufjs (reading our
 * .proto) decodes to the same fields, and what protobufjs encodes, wire.ts decodes.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import protobuf from "protobufjs";
import { PROTO_DIR } from "../src/index.ts";
import {
  decodeEmulatorStatus, decodeImage, decodeSnapshotPackage, encodeImageFormat, encodeKeyboardEvent, encodeSnapshotRequest, encodeTouchEvent, encodeVmRunState, grpcFrame, grpcMessages,
} from "../src/wire.ts";

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => (path.isAbsolute(target) ? target : path.join(PROTO_DIR, target));
root.loadSync(["emulator_controller.proto", "snapshot_service.proto"], { keepCase: true });
const T = (name: string) => root.lookupType(`android.emulation.control.${name}`);
const plain = (type: protobuf.Type, bytes: Uint8Array) => type.toObject(type.decode(bytes), { longs: Number, enums: Number, bytes: Array });

test("requests: TouchEvent (several fingers, negative and zero values), KeyboardEvent, ImageFormat (with a transport), SnapshotPackage", () => {
  const touch = { touches: [{ x: 10, y: 2000, identifier: 0, pressure: 1 }, { x: 0, y: 5, identifier: 3, pressure: 0 }, { x: 1, y: 1, identifier: -1, pressure: 300 }], display: 1 };
  assert.deepEqual(plain(T("TouchEvent"), encodeTouchEvent(touch)), {
    touches: [{ x: 10, y: 2000, pressure: 1 }, { y: 5, identifier: 3 }, { x: 1, y: 1, identifier: -1, pressure: 300 }],
    display: 1,
  });
  assert.equal(T("TouchEvent").decode(encodeTouchEvent({ touches: [{ x: 0, y: 0, identifier: 0, pressure: 0 }] })).toJSON().touches.length, 1, "an all-default touch is still one touch");
  assert.deepEqual(plain(T("KeyboardEvent"), encodeKeyboardEvent({ codeType: 0, eventType: 2, keyCode: 0, key: "GoBack", text: "é" })), { eventType: 2, key: "GoBack", text: "é" });
  assert.deepEqual(plain(T("ImageFormat"), encodeImageFormat({ format: 1, width: 1080, height: 1920 })), { format: 1, width: 1080, height: 1920 });
  assert.deepEqual(plain(T("ImageFormat"), encodeImageFormat({ format: 2, transport: { channel: 1, handle: "file:///dev/shm/f" } })), { format: 2, transport: { channel: 1, handle: "file:///dev/shm/f" } });
  assert.deepEqual(plain(T("SnapshotPackage"), encodeSnapshotRequest({ snapshot_id: "farm-abc" })), { snapshot_id: "farm-abc" });
  assert.deepEqual(plain(T("VmRunState"), encodeVmRunState({ state: 7 })), { state: 7 });
});

test("answers: Image, EmulatorStatus, SnapshotPackage decode what protobufjs encodes (unknown fields skipped)", () => {
  const pixels = Buffer.alloc(2 * 3 * 4, 7);
  const img = T("Image").encode({ format: { format: 1, width: 2, height: 3, rotation: { rotation: 1, xAxis: 0.5 } }, width: 2, height: 3, image: pixels, seq: 9, timestampUs: 2 ** 40 }).finish();
  const d = decodeImage(img);
  assert.deepEqual([d.format.format, d.format.width, d.format.height, d.seq, d.timestampUs], [1, 2, 3, 9, 2 ** 40]);
  assert.ok(Buffer.from(d.image).equals(pixels));
  const shared = decodeImage(T("Image").encode({ format: { format: 2, width: 2, height: 3, transport: { channel: 1, handle: "file:///dev/shm/f" } } }).finish());
  assert.deepEqual([shared.format.transport, shared.image.length], [{ channel: 1, handle: "file:///dev/shm/f" }, 0], "the MMAP transport echoed, no pixels");
  assert.equal(d.format.transport, undefined);
  const st = T("EmulatorStatus").encode({ version: "33.1", uptime: 12345, booted: true, vmConfig: { numberOfCpuCores: 4 }, hardwareConfig: { entry: [{ key: "hw.lcd.width", value: "1080" }] } }).finish();
  assert.deepEqual(decodeEmulatorStatus(st), { version: "33.1", uptime: 12345, booted: true, hardwareConfig: { entry: [{ key: "hw.lcd.width", value: "1080" }] } });
  const pkg = decodeSnapshotPackage(T("SnapshotPackage").encode({ snapshot_id: "s1", success: false, err: Buffer.from("no such snapshot") }).finish());
  assert.deepEqual([pkg.snapshot_id, pkg.success, Buffer.from(pkg.err).toString()], ["s1", false, "no such snapshot"]);
});

test("gRPC framing: messages split back; a truncated or compressed body is an error, not a hang", () => {
  const body = Buffer.concat([grpcFrame(Buffer.from([8, 1])), grpcFrame(new Uint8Array(0)), grpcFrame(Buffer.from("abc"))]);
  assert.deepEqual(grpcMessages(body).map((m) => [...m]), [[8, 1], [], [97, 98, 99]]);
  assert.throws(() => grpcMessages(body.subarray(0, body.length - 1)), /truncated/);
  const compressed = Buffer.from(grpcFrame(Buffer.from([8, 1])));
  compressed[0] = 1;
  assert.throws(() => grpcMessages(compressed), /compressed/);
  assert.throws(() => decodeImage(Buffer.from([0x22, 0x05, 1])), /past the end/);
});
