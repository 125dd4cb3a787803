/**
 * Hostile command-line arguments: NaN, negative, huge, hex/exponent spellings, control characters, unknown
 * flags. Each ends in one clear line and a non-zero exit — no stack trace, no raw terminal control bytes echoed.
 * Property-based checks of the option parsers in-process, then the real `farm` command in child processes.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import fc from "fast-check";
import { MAX_DURATION_MS, parseIntOption, parsePositiveNumberOption } from "../src/commands/options.ts";
import { runFarm } from "./fixtures.ts";

const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe("option parsers (in-process)", () => {
  test("property: integer options accept exactly plain decimal integers within their bounds", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary", maxLength: 24 }), fc.integer().map(String), fc.double().map(String), fc.constantFrom("NaN", "Infinity", "-0", "0x10", "1e3", " 1", "1 ", "", "+5", "٣")), fc.constantFrom("episodes", "adb-port", "settle-ms", "seed"), (v, name) => {
        let got: number | undefined;
        let err: Error | undefined;
        try {
          got = parseIntOption(name, v, 0);
        } catch (e) {
          err = e as Error;
        }
        const max = name === "episodes" ? 1_000_000 : name === "adb-port" ? 65_535 : name === "settle-ms" ? MAX_DURATION_MS : Number.MAX_SAFE_INTEGER;
        const valid = /^[+-]?\d{1,16}$/.test(v) && Number(v) >= 0 && Number(v) <= max && Number.isSafeInteger(Number(v));
        if (valid) assert.equal(got, Number(v));
        else {
          assert.ok(err, `${JSON.stringify(v)} accepted as ${got}`);
          assert.ok(err.message.startsWith(`--${name} must be an integer in 0..`), err.message);
          assert.ok(!RAW_CONTROL.test(err.message), JSON.stringify(err.message));
        }
      }),
      { numRuns: 300 },
    );
  });

  test("property: positive number options accept finite decimals in (0, max]", () => {
    fc.assert(
      fc.property(fc.oneof(fc.double().map(String), fc.string({ unit: "binary", maxLength: 16 }), fc.constantFrom("nan", "inf", "1e18", "0", "-1", "86400", "86400.5", ".5")), (v) => {
        let got: number | undefined;
        try {
          got = parsePositiveNumberOption("max-sec", v, 86_400);
        } catch (e) {
          assert.match((e as Error).message, /^--max-sec must be a number in \(0, 86400\]/);
          assert.ok(!RAW_CONTROL.test((e as Error).message));
          return;
        }
        assert.ok(got !== undefined && Number.isFinite(got) && got > 0 && got <= 86_400, `${v} → ${got}`);
      }),
      { numRuns: 200 },
    );
  });
});

const farm = (args: string[], timeoutMs = 60_000) => runFarm(args, { timeoutMs, env: { FARM_DEBUG: "" } });

describe("the farm command", () => {
  const dir = mkdtempSync(join(tmpdir(), "farm-hostile-cli-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const task = join(dir, "t.textproto");
  writeFileSync(task, 'id: "t"\n');
  const evilTask = join(dir, "evil.textproto");
  writeFileSync(evilTask, 'id: "evil"\ndescription: "\\x1b]0;pwned\\x07\\x1b[2J"\n');
  const fifo = join(dir, "fifo.textproto");
  execFileSync("mkfifo", [fifo]);

  /** argv → what stdout/stderr must mention. */
  const CASES: [string[], RegExp][] = [
    [["run", task, "--episodes", "NaN"], /--episodes must be an integer/],
    [["run", task, "--episodes", "-1"], /--episodes must be an integer/],
    [["run", task, "--episodes", "1e3"], /--episodes must be an integer/],
    [["run", task, "--episodes", "99999999999999999999"], /--episodes must be an integer/],
    [["run", task, "--seed", "0x10"], /--seed must be an integer/],
    [["run", task, "--settle-ms", "Infinity"], /--settle-ms must be an integer/],
    [["run", task, "--settle-ms", "99999999999"], /--settle-ms must be an integer in 0\.\.86400000/],
    [["run", task, "--device", "x", "--adb-port", "70000"], /--adb-port must be an integer/],
    [["run", task, "--episodes", "\u001b[31m1"], /--episodes must be an integer .*\\x1b\[31m1/],
    [["run", task, "--bogus-flag"], /unknown option '--bogus-flag'/],
    [["run", task, "--\u001b]0;title\u0007"], /unknown option '--\\x1b\]0;title\\x07'/],
    [["frobnicate"], /unknown command 'frobnicate'/],
    [["task", "validate", join(dir, "missing\u001b[2J\u202e.textproto")], /missing\\x1b\[2J\\u202e\.textproto:1: cannot read/],
    [["task", "validate", fifo], /FIFO, not a regular file/],
    [["task", "show", evilTask], /description: text .*\\u001b\]0;pwned/],
    [["sim", "--devices", "100000"], /--devices must be an integer in 1\.\.256/],
    [["sim", "--devices", "1", "--screen", "0x0"], /--screen must look like/],
    [["sim", "--devices", "1", "--screen", "99999999x1"], /--screen must look like/],
    [["submit", task, "--episodes", "2", "--max-sec", "nan"], /--max-sec must be a number/],
    [["submit", task, "--episodes", "-5"], /--episodes must be an integer/],
    [["watch", "c1", "--interval-ms", "-5"], /--interval-ms must be an integer/],
    [["scheduler", "--port", "99999"], /--port must be an integer in 0\.\.65535/],
    [["bench", "constructor"], /unknown scenario 'constructor'/],
    [["bench", "__proto__"], /unknown scenario '__proto__'/],
  ];

  test(`${CASES.length} hostile command lines: a clear line, exit 1, no stack trace, nothing raw`, { timeout: 300_000 }, async () => {
    for (let i = 0; i < CASES.length; i += 4) {
      const batch = CASES.slice(i, i + 4);
      const results = await Promise.all(batch.map(([argv]) => farm(argv)));
      results.forEach((r, k) => {
        const [argv, expected] = batch[k]!;
        const what = JSON.stringify(argv);
        const all = `${r.stdout}${r.stderr}`;
        assert.notEqual(r.code, 0, `${what} exited 0:\n${all}`);
        assert.notEqual(r.code, null, `${what} was killed after the deadline`);
        assert.match(all, expected, `${what}:\n${all}`);
        assert.doesNotMatch(all, /^\s+at .+:\d+:\d+\)?$/m, `${what} printed a stack trace:\n${all}`);
        assert.ok(!RAW_CONTROL.test(all), `${what} echoed a raw control character: ${JSON.stringify(all)}`);
      });
    }
  });
});
