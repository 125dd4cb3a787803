import { test } from "node:test";
import assert from "node:assert/strict";
import { FarmError, coerceError, isFarmError } from "../src/index.ts";

class ThingError extends FarmError<"broken" | "gone"> {
  override readonly name = "ThingError";
}

test("a FarmError subclass carries its code, retryable (default false), cause and name", () => {
  const cause = new Error("root");
  const e = new ThingError("gone", "the thing is gone", { retryable: true, cause });
  assert.equal(e.code, "gone");
  assert.equal(e.retryable, true);
  assert.equal(e.cause, cause);
  assert.equal(e.name, "ThingError");
  assert.equal(new ThingError("broken", "x").retryable, false);
  assert.ok(e instanceof ThingError && e instanceof FarmError && e instanceof Error);
  assert.ok(!(new Error("plain") instanceof FarmError));
  assert.ok(!(new FarmError("x", "y") instanceof ThingError));
});

test("instanceof FarmError holds for an error from another copy of the module (brand, not identity)", async () => {
  const copy = (await import(`../src/index.ts?copy=${Date.now()}`)) as typeof import("../src/index.ts");
  assert.notEqual(copy.FarmError, FarmError);
  const foreign = new copy.FarmError("x", "from the other copy");
  assert.ok(foreign instanceof FarmError);
  assert.ok(isFarmError(foreign));
  assert.ok(!isFarmError({ code: "x", retryable: true }));
});

test("coerceError: Errors pass through; strings, error-like objects and others become Errors with the value as cause", () => {
  const e = new Error("x");
  assert.equal(coerceError(e), e);
  assert.equal(coerceError("boom").message, "boom");
  const like = { message: "like an error", code: 7 };
  assert.equal(coerceError(like).message, "like an error");
  assert.equal(coerceError(like).cause, like);
  assert.equal(coerceError(undefined).message, "undefined");
  assert.equal(coerceError(42).message, "42");
});
