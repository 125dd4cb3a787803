/**
 * Our protos are wire-compatible with the emulator's published ones: every method of both services
 * is declared with its streaming shape, and messages encode to the bytes the published field
 * numbers and types give (checked against hand-encoded bytes, not against our own encoder).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { emulatorGrpc, ImgFormat, KeyCodeType, RunState, bearerMetadata, tokenFromMetadata } from "@farm/emulator-grpc";

const { services } = emulatorGrpc();

test("EmulatorController and SnapshotService declare every published method with its streaming shape", () => {
  const shape = (def: Record<string, { requestStream: boolean; responseStream: boolean; path: string }>) =>
    Object.fromEntries(Object.entries(def).map(([k, m]) => [k, `${m.requestStream ? "stream " : ""}->${m.responseStream ? " stream" : ""}`]));
  const ctl = shape(services.emulatorController as never);
  assert.equal(Object.keys(ctl).length, 36);
  assert.equal(ctl["streamScreenshot"], "-> stream");
  assert.equal(ctl["injectAudio"], "stream ->");
  for (const m of ["getStatus", "getScreenshot", "sendTouch", "sendKey", "sendMouse", "setVmState", "getVmState"]) assert.equal(ctl[m], "->", m);
  assert.equal((services.emulatorController as never as Record<string, { path: string }>)["sendTouch"]!.path, "/android.emulation.control.EmulatorController/sendTouch");
  const snap = shape(services.snapshotService as never);
  assert.deepEqual(Object.keys(snap).sort(), ["DeleteSnapshot", "ListSnapshots", "LoadSnapshot", "PullSnapshot", "PushSnapshot", "SaveSnapshot", "TrackProcess"]);
  assert.equal(snap["PullSnapshot"], "-> stream");
});

test("messages encode with the published field numbers and types", () => {
  const ser = (svc: unknown, method: string, msg: unknown): string =>
    (svc as Record<string, { requestSerialize(m: unknown): Buffer }>)[method]!.requestSerialize(msg).toString("hex");
  // ImageFormat{format=RGBA8888(1), width=3:180, height=4:320}
  assert.equal(ser(services.emulatorController, "getScreenshot", { format: ImgFormat.RGBA8888, width: 180, height: 320 }), "0801" + "18b401" + "20c002");
  // TouchEvent{touches=1:[Touch{x=1:5, y=2:7, identifier=3:1, pressure=4:1}]}
  assert.equal(ser(services.emulatorController, "sendTouch", { touches: [{ x: 5, y: 7, identifier: 1, pressure: 1 }] }), "0a08" + "0805" + "1007" + "1801" + "2001");
  // KeyboardEvent{codeType=1:XKB(2), eventType=2:keypress(2), keyCode=3:0xff51}
  assert.equal(ser(services.emulatorController, "sendKey", { codeType: KeyCodeType.XKB, eventType: 2, keyCode: 0xff51 }), "0802" + "1002" + "18d1fe03");
  // VmRunState{state=1:SHUTDOWN(5)}
  assert.equal(ser(services.emulatorController, "setVmState", { state: RunState.SHUTDOWN }), "0805");
  // SnapshotPackage{snapshot_id=1:"ab"}
  assert.equal(ser(services.snapshotService, "SaveSnapshot", { snapshot_id: "ab" }), "0a026162");
});

test("bearer token metadata round-trips; other schemes are not a token", () => {
  assert.equal(tokenFromMetadata(bearerMetadata("t0k")), "t0k");
  const md = bearerMetadata("x");
  md.set("authorization", "Basic abc");
  assert.equal(tokenFromMetadata(md), undefined);
});
