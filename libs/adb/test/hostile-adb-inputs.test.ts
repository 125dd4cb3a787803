/**
 * Hostile driver inputs: text the adb wire format cannot carry in one request is split (input_text) or refused
 * with a clear `failed_precondition` naming the limit — never a dropped connection ("closed"); control characters
 * are refused before any device command. Property-based checks of the splitting, then a real adb server and a
 * simulated device.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import type { AdbCommand } from "@farm/task";
import { AdbDriver, type AdbDevice, type StepResult } from "@farm/adb";
import { checkInputText } from "@farm/adb";
import { ADB_REQUEST_MAX_BYTES, checkShellRequest, INPUT_TEXT_CHUNK_BYTES, INPUT_TEXT_MAX_CHARS, inputTextPieces } from "@farm/adb/testing";
import { shQuote } from "@farm/shell-words";

describe("input splitting and request limits (pure)", () => {
  test("property: pieces rejoin to the text, each fits one request, no code point is split", { timeout: 60_000 }, () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(fc.constantFrom("'", '"', "\\", "$", "`", " ", "%", "%s", "s", "é", "😀"), fc.string({ unit: "grapheme", maxLength: 1 })), maxLength: 3000 }), (text) => {
        const pieces = inputTextPieces(text);
        assert.equal(pieces.join(""), text);
        if (Buffer.byteLength(shQuote(text)) > INPUT_TEXT_CHUNK_BYTES) assert.ok(pieces.length > 1, "text over the bound is cut");
        // Never cut between the % and the s of a %s (each piece's `input text` would then type them as they are).
        for (let i = 1; i < pieces.length; i++) assert.ok(!(pieces[i - 1]!.endsWith("%") && pieces[i]!.startsWith("s")), "cut inside %s");
        for (const p of pieces) {
          assert.ok(p.length > 0);
          assert.ok(Buffer.byteLength(shQuote(p)) <= INPUT_TEXT_CHUNK_BYTES, `${Buffer.byteLength(shQuote(p))} bytes`);
          assert.ok(!/^[\udc00-\udfff]/.test(p) && !/[\ud800-\udbff]$/.test(p), "split inside a surrogate pair");
          assert.equal(checkShellRequest(`input text ${shQuote(p)}`, 64), undefined);
        }
      }),
      { numRuns: 200 },
    );
  });

  test("property: control and bidi characters in input_text are refused with their position", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z ]{0,20}$/), fc.integer({ min: 0, max: 0x9f }).filter((c) => c < 0x20 || c >= 0x7f), fc.stringMatching(/^[a-z]{0,5}$/), (a, code, b) => {
        const msg = checkInputText(`${a}${String.fromCharCode(code)}${b}`);
        assert.ok(msg && msg.includes(`position ${a.length}`), msg);
      }),
      { numRuns: 200 },
    );
    assert.match(checkInputText("x\u202ey") ?? "", /U\+202E/);
    assert.match(checkInputText("x".repeat(INPUT_TEXT_MAX_CHARS + 1)) ?? "", /longer than/);
    assert.equal(checkInputText("hello world 'quoted' $HOME `x` é 😀"), undefined);
  });

  test("property: a shell request is refused exactly when it exceeds the wire limit", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: ADB_REQUEST_MAX_BYTES + 100 }), fc.constantFrom("a", "é", "😀"), (n, ch) => {
        const line = ch.repeat(Math.ceil(n / Buffer.byteLength(ch)));
        const bytes = Buffer.byteLength(`shell:${line}`);
        assert.equal(checkShellRequest(line) !== undefined, bytes > ADB_REQUEST_MAX_BYTES, `${bytes} bytes`);
      }),
      { numRuns: 100 },
    );
    assert.match(checkShellRequest("echo a\u0000b") ?? "", /NUL/);
  });
});

describe("against a real adb server and a simulated device", () => {
  let adb: LocalAdbServer;
  let sims: Awaited<ReturnType<typeof startSimulatedDevices>>;
  let driver: AdbDriver;
  let dev: AdbDevice;
  const run = (cmd: AdbCommand, timeoutSec = 0): Promise<StepResult> => dev.execute({ timeoutSec, cmd });

  before(async () => {
    adb = await startAdbServer();
    sims = await startSimulatedDevices({ adbPort: adb.port, count: 1, seed: 3 });
    driver = new AdbDriver({ port: adb.port, defaultTimeoutMs: 30_000, queryTimeoutMs: 5000 });
    dev = driver.device(sims.devices[0]!.serial);
    const boot = await dev.waitBootComplete(20_000);
    assert.equal(boot.status, "ok", boot.message);
  });
  after(async () => {
    await driver?.close();
    await sims?.close();
    await adb?.close();
  });

  test("a long input_text whose quoting exceeds one request is typed in pieces", { timeout: 120_000 }, async () => {
    // 16 384 single quotes become 65 538 bytes once quoted: one request could not carry them.
    const r = await run({ command: "input_text", text: "'".repeat(INPUT_TEXT_MAX_CHARS) });
    assert.equal(r.status, "ok", r.message);
    const mixed = await run({ command: "input_text", text: "héllo 😀 $HOME `id` \"q\" ".repeat(200) });
    assert.equal(mixed.status, "ok", mixed.message);
  });

  test("over-long and control-character input_text: failed_precondition, not 'closed'", { timeout: 30_000 }, async () => {
    for (const text of ["x".repeat(70_000), "line\nbreak", "\u0000", "esc\u001b[31m", "bidi\u202e"]) {
      const r = await run({ command: "input_text", text });
      assert.equal(r.status, "failed_precondition", `${JSON.stringify(text.slice(0, 20))}: ${r.status} ${r.message}`);
      assert.doesNotMatch(r.message, /closed/);
    }
  });

  test("a generic shell request over the wire limit is refused with the limit named", { timeout: 30_000 }, async () => {
    const r = await run({ command: "generic", args: ["shell", "echo", "x".repeat(70_000)] });
    assert.equal(r.status, "failed_precondition", r.message);
    assert.match(r.message, /65535/);
    const sh = await dev.shell(`echo ${"y".repeat(70_000)}`, { timeoutMs: 5000 });
    assert.equal(sh.status, "failed_precondition", sh.message);
    // The device is still fine afterwards.
    const ok = await dev.shell("echo alive", { timeoutMs: 5000 });
    assert.equal(ok.status, "ok", ok.message);
    assert.equal(ok.stdout.trim(), "alive");
  });

  test("step deadlines a timer cannot hold are refused", { timeout: 30_000 }, async () => {
    for (const timeoutSec of [Infinity, NaN, -1, 1e12]) {
      const r = await run({ command: "get_orientation" }, timeoutSec);
      assert.equal(r.status, "failed_precondition", `${timeoutSec}: ${r.message}`);
    }
  });
});
