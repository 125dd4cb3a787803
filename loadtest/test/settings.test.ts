/** The benchmarks' settings: scale-host's environment read through SettingsReader, a missing or bad value named. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, SettingsReader } from "@farm/config";
import { scaleHostSettings } from "../src/settings.ts";

const base = { REDIS_URL: "redis://127.0.0.1:1", SCALE_PREFIX: "p", SCALE_DEVICES: "3", SCALE_HOST: "h0", SCALE_OUT: "/o", SCALE_TASK: "/t.textproto" };
const read = (env: Record<string, string>) => scaleHostSettings(new SettingsReader("loadtest", env));

test("scale-host settings: required values, numbers with their defaults, lock only when set", () => {
  assert.deepEqual(read({ ...base, SCALE_STEP_MS: "20", SCALE_STEP_JITTER: "0.25" }), {
    redisUrl: "redis://127.0.0.1:1", prefix: "p", devices: 3, host: "h0", out: "/o", task: "/t.textproto",
    stepMs: 20, jitter: 0.25, settleMs: 0, lockMs: undefined,
  });
  assert.equal(read({ ...base, SCALE_LOCK_MS: "4000" }).lockMs, 4000);
});

test("scale-host settings: a missing or bad value is a ConfigError naming its variable", () => {
  const { SCALE_TASK: _, ...noTask } = base;
  assert.throws(() => read(noTask), (e: unknown) => e instanceof ConfigError && /task \(SCALE_TASK\) is not set/.test(e.message));
  assert.throws(() => read({ ...base, SCALE_DEVICES: "0" }), (e: unknown) => e instanceof ConfigError && /devices.*1\.\.100000, got '0'/.test(e.message));
  assert.throws(() => read({ ...base, SCALE_STEP_JITTER: "2" }), (e: unknown) => e instanceof ConfigError && /jitter \(SCALE_STEP_JITTER\) must be a number in 0\.\.0\.9/.test(e.message));
  assert.throws(() => read({ ...base, SCALE_STEP_MS: "fast" }), (e: unknown) => e instanceof ConfigError && /SCALE_STEP_MS/.test(e.message));
});
