/**
 * Our protos are wire-compatible with AndroidEnv's published ones: A11yService declares its three
 * methods with their streaming shapes, and messages encode to the bytes the published field numbers
 * and types give (hand-encoded here, not produced by our own encoder).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { a11yGrpc, WindowType } from "@farm/a11y-grpc";

type Method = { path: string; requestStream: boolean; responseStream: boolean; requestSerialize(m: unknown): Buffer; responseSerialize(m: unknown): Buffer; requestDeserialize(b: Buffer): unknown };
const methods = a11yGrpc().service as unknown as Record<string, Method>;
const m = (name: string): Method => methods[name]!;

test("A11yService declares SendForest, SendEvent and Bidi with their published paths and streaming shapes", () => {
  assert.deepEqual(Object.keys(methods).sort(), ["Bidi", "SendEvent", "SendForest"]);
  assert.equal(m("Bidi").path, "/android_env.A11yService/Bidi");
  assert.deepEqual([m("Bidi").requestStream, m("Bidi").responseStream], [true, true]);
  assert.deepEqual([m("SendForest").requestStream, m("SendForest").responseStream], [false, false]);
  assert.equal(m("SendEvent").path, "/android_env.A11yService/SendEvent");
});

test("a forest encodes with the published field numbers (window type 6, tree 11, node fields 1, 2, 23, 25 packed)", () => {
  const forest = {
    windows: [{ window_type: WindowType.TYPE_APPLICATION, tree: { nodes: [{ unique_id: 1, bounds_in_screen: { left: 1, bottom: 2 }, is_visible_to_user: true, child_ids: [2, 3] }] } }],
  };
  const node = "0801" + "120408012002" + "b80101" + "ca01020203";
  const tree = "0a10" + node;
  const window = "3001" + "5a12" + tree;
  assert.equal(m("SendForest").requestSerialize(forest).toString("hex"), "0a16" + window);
  // The same forest inside ClientToServer is its field 2.
  assert.equal(m("Bidi").requestSerialize({ forest }).toString("hex"), "1218" + "0a16" + window);
});

test("events are a string map (field 1 of EventRequest, field 1 of ClientToServer); get_forest is field 1 of ServerToClient", () => {
  assert.equal(m("SendEvent").requestSerialize({ event: { a: "b" } }).toString("hex"), "0a06" + "0a0161" + "120162");
  assert.equal(m("Bidi").requestSerialize({ event: { event: { a: "b" } } }).toString("hex"), "0a08" + "0a06" + "0a0161120162");
  assert.equal(m("Bidi").responseSerialize({ get_forest: {} }).toString("hex"), "0a00");
});

test("a received ClientToServer names its oneof member in payload", () => {
  const got = m("Bidi").requestDeserialize(Buffer.from("0a080a060a0161120162", "hex")) as { payload: string; event: { event: Record<string, string> } };
  assert.equal(got.payload, "event");
  assert.deepEqual({ ...got.event.event }, { a: "b" });
});
