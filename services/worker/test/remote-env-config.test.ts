import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveWorkerConfig } from "../src/index.ts";

test("remote env: off by default; FARM_ENV_PORT turns it on at loopback; beyond loopback a token is required", () => {
  assert.equal(resolveWorkerConfig({}, {}).remoteEnv, undefined);
  assert.deepEqual(resolveWorkerConfig({}, { FARM_ENV_PORT: "7000" }).remoteEnv, { port: 7000, host: "127.0.0.1", token: undefined, idleTimeoutMs: 60_000 });
  assert.throws(() => resolveWorkerConfig({ envPort: 7000, envHost: "0.0.0.0" }, {}), /beyond loopback: set a token \(FARM_ENV_TOKEN/);
  assert.equal(resolveWorkerConfig({ envPort: 0, envHost: "0.0.0.0", envToken: "x".repeat(24) }, {}).remoteEnv?.host, "0.0.0.0");
  assert.throws(() => resolveWorkerConfig({ envPort: 0, envToken: "short" }, {}), /16-512 printable characters/);
  assert.throws(() => resolveWorkerConfig({}, { FARM_ENV_PORT: "70000" }), /envPort \(FARM_ENV_PORT\) must be an integer in 0\.\.65535/);
});
