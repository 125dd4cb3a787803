import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, intInRange, SettingsReader } from "../src/index.ts";

test("a flag wins over the environment, which wins over the default; empty variables count as unset", () => {
  const r = new SettingsReader("worker", { FARM_A: "7", FARM_EMPTY: "" });
  assert.equal(r.int("a", { env: "FARM_A", default: 1, min: 0, max: 10 }), 7);
  assert.equal(r.int("a", { flag: 3, env: "FARM_A", default: 1, min: 0, max: 10 }), 3);
  assert.equal(r.int("a", { env: "FARM_EMPTY", default: 1, min: 0, max: 10 }), 1);
  assert.equal(r.string("s", { env: "FARM_MISSING", default: "d" }), "d");
  assert.equal(r.string("s", { env: "FARM_MISSING", default: undefined }), undefined);
});

test("a bad value names the setting, its variable and what is allowed", () => {
  const r = new SettingsReader("worker", { FARM_PORT: "80a", FARM_MODE: "fast", FARM_ON: "maybe" });
  assert.throws(
    () => r.int("metricsPort", { env: "FARM_PORT", default: 1, min: 0, max: 65_535 }),
    (e: unknown) => e instanceof ConfigError && e.code === "CONFIG_INVALID" && !e.retryable && /^worker config: metricsPort \(FARM_PORT\) must be an integer in 0\.\.65535, got '80a'$/.test(e.message),
  );
  assert.throws(() => r.int("n", { flag: 1.5, default: 1, min: 0, max: 9 }), /n must be an integer in 0\.\.9, got '1\.5'/);
  assert.throws(() => r.oneOf("mode", ["discover", "off"], { env: "FARM_MODE", default: "off" }), /mode \(FARM_MODE\) must be discover or off, got 'fast'/);
  assert.throws(() => r.bool("on", { env: "FARM_ON", default: false }), /on \(FARM_ON\) must be true or false/);
});

test("lists split on commas and drop blanks; booleans accept the usual spellings", () => {
  const r = new SettingsReader("scheduler", { FARM_L: " a, b ,,c ", FARM_T: "yes", FARM_F: "0" });
  assert.deepEqual(r.list("l", { env: "FARM_L", default: [] }), ["a", "b", "c"]);
  assert.deepEqual(r.list("l", { flag: ["x"], env: "FARM_L", default: [] }), ["x"]);
  assert.deepEqual(r.list("l", { flag: "x,y", default: [] }), ["x", "y"]);
  assert.equal(r.bool("t", { env: "FARM_T", default: false }), true);
  assert.equal(r.bool("f", { env: "FARM_F", default: true }), false);
});

test("check puts a service's own validation message under the setting's label", () => {
  const r = new SettingsReader("scheduler", {});
  assert.equal(r.check("token", "FARM_API_TOKEN", "x".repeat(16), () => {}), "x".repeat(16));
  assert.throws(
    () => r.check("token", "FARM_API_TOKEN", "short", () => { throw new Error("use at least 16 characters"); }),
    (e: unknown) => e instanceof ConfigError && e.message === "scheduler config: token (FARM_API_TOKEN) use at least 16 characters",
  );
});

test("intInRange: the one integer check of settings, flags and benchmark options", () => {
  for (const [text, n] of [["0", 0], ["+5", 5], ["-3", -3], ["007", 7], ["9007199254740991", 9007199254740991]] as const) {
    assert.equal(intInRange(text, -10, Number.MAX_SAFE_INTEGER), n, text);
  }
  for (const text of ["", " 1", "1 ", "1e3", "0x10", "1.0", "NaN", "Infinity", "٣", "12345678901234567", "9007199254740993"]) {
    assert.equal(intInRange(text, -10, Number.MAX_SAFE_INTEGER), undefined, JSON.stringify(text));
  }
  assert.equal(intInRange("11", 0, 10), undefined);
  assert.equal(intInRange(7, 0, 10), 7);
  assert.equal(intInRange(1.5, 0, 10), undefined);
  const r = new SettingsReader("svc", { FARM_N: " 8 ", FARM_X: "8x" });
  assert.equal(r.int("n", { env: "FARM_N", default: 1, min: 0, max: 9 }), 8, "blanks around an environment value are layout");
  assert.throws(() => r.int("x", { env: "FARM_X", default: 1, min: 0, max: 9 }), /svc config: x \(FARM_X\) must be an integer in 0\.\.9, got '8x'/);
});

test("a bad value is shown without raw control or bidi characters", () => {
  const r = new SettingsReader("svc", { FARM_L: "de\u001b[2J\u202e" });
  assert.throws(
    () => r.oneOf("level", ["info", "debug"], { env: "FARM_L", default: "info" }),
    (e: unknown) => e instanceof ConfigError && e.message.includes("'de\\x1b[2J\\u202e'") && !/[\u001b\u202e]/.test(e.message),
  );
});
