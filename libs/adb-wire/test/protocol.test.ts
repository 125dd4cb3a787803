import assert from "node:assert/strict";
import test from "node:test";
import { AdbWireError, encodeRequest, parseDeviceList, takeLengthPrefixed, takeStatus, MAX_REQUEST_BYTES } from "../src/index.ts";

test("replies: OKAY with what follows, FAIL with its message, partial replies wait, a malformed one is an error", () => {
  const ok = takeStatus(Buffer.from("OKAYhello"));
  assert.ok(ok?.ok && ok.rest.toString() === "hello");
  assert.deepEqual(takeStatus(Buffer.from("FAIL0010device not found")), { ok: false, message: "device not found" });
  assert.equal(takeStatus(Buffer.from("OKA")), undefined);
  assert.equal(takeStatus(Buffer.from("FAIL0012device")), undefined, "the message is not all there yet");
  assert.deepEqual(takeStatus(Buffer.from("FAILzz12device")), { ok: false, message: 'malformed FAIL length "zz12"' });
  assert.deepEqual(takeStatus(Buffer.from("WHAT")), { ok: false, message: 'unexpected reply "WHAT"' });
});

test("requests: the length counts bytes, not characters; one over 65 535 bytes is refused before anything is sent", () => {
  assert.equal(encodeRequest("shell:echo é").toString(), "000dshell:echo é");
  assert.equal(encodeRequest("x".repeat(MAX_REQUEST_BYTES)).length, MAX_REQUEST_BYTES + 4);
  assert.throws(() => encodeRequest("é".repeat(MAX_REQUEST_BYTES / 2 + 1)), (e: unknown) => e instanceof AdbWireError && e.code === "request_too_long" && /65535/.test(e.message));
});

test("length-prefixed answers and device lists", () => {
  const p = takeLengthPrefixed(Buffer.from("0015emulator-5554\tdevice\nrest"));
  assert.ok(p && "text" in p);
  assert.equal(p.text, "emulator-5554\tdevice\n");
  assert.equal(p.rest.toString(), "rest");
  assert.equal(takeLengthPrefixed(Buffer.from("0015emul")), undefined);
  assert.deepEqual(takeLengthPrefixed(Buffer.from("00g1")), { error: '"00g1"' });
  assert.deepEqual([...parseDeviceList("emulator-5554\tdevice\nemulator-5556\toffline\n\n")], [["emulator-5554", "device"], ["emulator-5556", "offline"]]);
  assert.equal(parseDeviceList("").size, 0);
});
