import assert from "node:assert/strict";
import { test } from "node:test";
import { DataType, dmEnvRpc, numbers, scalarNumber, scalarString, tensor } from "../src/index.ts";

test("the service is dm_env_rpc.v1.Environment/Process, a bidirectional stream", () => {
  const p = dmEnvRpc().service.Process!;
  assert.equal(p.path, "/dm_env_rpc.v1.Environment/Process");
  assert.equal(p.requestStream, true);
  assert.equal(p.responseStream, true);
});

test("messages round-trip; uint64 map keys come back as decimal ids; error carries google.rpc.Status", () => {
  const p = dmEnvRpc().service.Process!;
  const req = p.requestDeserialize(p.requestSerialize({ step: { actions: { 1: tensor(DataType.INT32, [2]), 70000: tensor(DataType.FLOAT, [0.25, 0.5], [2]) }, requested_observations: [1, 4] } }));
  assert.equal(req.payload, "step");
  assert.deepEqual(Object.keys(req.step.actions).sort(), ["1", "70000"]);
  assert.equal(scalarNumber(req.step.actions["1"], "a"), 2);
  assert.deepEqual(numbers(req.step.actions["70000"], "b"), [0.25, 0.5]);
  assert.deepEqual(req.step.actions["70000"].shape, [2]);
  const res = p.responseDeserialize(p.responseSerialize({ error: { code: 8, message: "no idle device" } }));
  assert.equal(res.payload, "error");
  assert.deepEqual({ code: res.error.code, message: res.error.message }, { code: 8, message: "no idle device" });
  const px = p.responseDeserialize(p.responseSerialize({ step: { state: 1, observations: { 1: tensor(DataType.UINT8, new Uint8Array([1, 2, 3]), [1, 1, 3]) } } }));
  assert.deepEqual([...px.step.observations["1"].uint8s.array], [1, 2, 3]);
});

test("tensor helpers name the tensor in their errors", () => {
  assert.equal(scalarString(tensor(DataType.STRING, ["classic_2048"]), "task"), "classic_2048");
  assert.throws(() => scalarString(tensor(DataType.INT32, [1]), "task"), /task: expected a string tensor/);
  assert.throws(() => scalarNumber(tensor(DataType.INT32, [1, 2], [2]), "seed"), /seed: expected one value, got 2/);
  assert.throws(() => numbers({}, "x"), /x: tensor has no payload/);
});
