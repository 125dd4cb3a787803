import { test } from "node:test";
import assert from "node:assert/strict";
import { intOpt } from "../src/options.ts";

test("benchmark integer options: plain decimal within bounds, default when absent, a clear error otherwise", () => {
  assert.equal(intOpt({}, "devices", 16), 16);
  assert.equal(intOpt({ devices: true }, "devices", 16), 16, "a bare --devices keeps the default");
  assert.equal(intOpt({ devices: "8" }, "devices", 16), 8);
  assert.equal(intOpt({ warmup: "0" }, "warmup", 4, 0), 0);
  for (const bad of ["0", "1e3", "0x10", " 8", "8.5", "", "NaN"]) {
    assert.throws(() => intOpt({ devices: bad }, "devices", 16), (e: unknown) => e instanceof Error && e.message.startsWith("--devices must be a positive integer, got "), bad);
  }
  assert.throws(() => intOpt({ shards: "9" }, "shards", 1, 1, 8), /--shards must be an integer in 1\.\.8, got 9/);
  assert.throws(() => intOpt({ devices: "\u001b[2J" }, "devices", 16), (e: unknown) => e instanceof Error && !e.message.includes("\u001b") && e.message.includes("\\x1b[2J"));
});
