/** The worker's emulator gRPC settings: flags over env over the default (discover), and bad values named. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveWorkerConfig } from "../src/index.ts";

test("gRPC transport: discover by default; FARM_GRPC, FARM_GRPC_ENDPOINTS (serial=host:port[/token]) and FARM_GRPC_SHARED_FRAMES from the environment; flags win", () => {
  assert.deepEqual(resolveWorkerConfig({}, { XDG_RUNTIME_DIR: "/run/user/7" }).grpc, { mode: "discover", discoveryDir: "/run/user/7/avd/running", sharedFrames: true });
  const env = { FARM_GRPC: "config", FARM_GRPC_ENDPOINTS: "emulator-5554=127.0.0.1:8554, emulator-5556=10.0.0.2:8556/tok.en-1", FARM_GRPC_DISCOVERY_DIR: "/run/x" };
  assert.deepEqual(resolveWorkerConfig({}, env).grpc, {
    mode: "config",
    endpoints: { "emulator-5554": { address: "127.0.0.1:8554" }, "emulator-5556": { address: "10.0.0.2:8556", token: "tok.en-1" } },
    discoveryDir: "/run/x",
    sharedFrames: true,
  });
  assert.equal(resolveWorkerConfig({ grpc: { mode: "off" } }, env).grpc.mode, "off");
  assert.equal(resolveWorkerConfig({}, { FARM_GRPC_SHARED_FRAMES: "false" }).grpc.sharedFrames, false);
  assert.equal(resolveWorkerConfig({ grpc: { sharedFrames: true } }, { FARM_GRPC_SHARED_FRAMES: "0" }).grpc.sharedFrames, true);
});

test("gRPC transport: a bad mode or endpoint item is an error naming the setting", () => {
  assert.throws(() => resolveWorkerConfig({}, { FARM_GRPC: "always" }), /FARM_GRPC.*discover, config or off.*always/);
  assert.throws(() => resolveWorkerConfig({}, { FARM_GRPC_ENDPOINTS: "emulator-5554=127.0.0.1" }), /FARM_GRPC_ENDPOINTS\) item 'emulator-5554=127.0.0.1'/);
  assert.throws(() => resolveWorkerConfig({}, { FARM_GRPC_ENDPOINTS: "a b=1.2.3.4:5" }), /FARM_GRPC_ENDPOINTS/);
  assert.throws(() => resolveWorkerConfig({}, { FARM_GRPC_SHARED_FRAMES: "maybe" }), /FARM_GRPC_SHARED_FRAMES.*true or false.*maybe/);
});

test("gRPC transport: a serial named __proto__ is an ordinary key, not the object's prototype", () => {
  const endpoints = resolveWorkerConfig({}, { FARM_GRPC: "config", FARM_GRPC_ENDPOINTS: "__proto__=127.0.0.1:8554" }).grpc.endpoints!;
  assert.equal(Object.getPrototypeOf(endpoints), Object.prototype);
  assert.deepEqual(Object.getOwnPropertyDescriptor(endpoints, "__proto__")?.value, { address: "127.0.0.1:8554" });
});
