/**
 * Hostile Avro files: hand-written cases for each declared size a file can lie about, plus fast-check
 * mutations of valid files of every codec. Every file is read to the end inside a worker thread with a
 * 256 MiB heap and a deadline: each must either read or fail with a `corrupt_file` error that names the
 * file; none may hang, crash or allocate without bound.
 */
import assert from "node:assert/strict";
import { writeFile, readFile } from "node:fs/promises";
import path from "node:path";
import zlib from "node:zlib";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  episodeSchema,
  episodeToAvro,
  formatSummary,
  inspectTrajectories,
  syntheticEpisode,
  writeEpisodeFile,
  type CodecName,
} from "@farm/trajectory";
import { encodeBlockPrefix, headerType, MAGIC } from "../src/container-format.ts";
import { cachedAvroTypeFor } from "../src/logical-types.ts";
import { tempDir } from "./helpers.ts";

const BUDGET = 4 * 1024 * 1024;
const SYNC = Buffer.alloc(16, 7);
const SCHEMA_JSON = JSON.stringify(episodeSchema);
const type = cachedAvroTypeFor(episodeSchema);

interface Outcome {
  file: string;
  ok: boolean;
  episodes?: number;
  trajectoryError?: boolean;
  code?: string;
  message?: string;
  ms: number;
}

/** Reads every file in a heap-limited child process; rejects if it does not finish within `deadlineMs`. */
async function readBounded(files: string[], deadlineMs = 120_000): Promise<Outcome[]> {
  const job = path.join(path.dirname(files[0]!), "job.json");
  await writeFile(job, JSON.stringify({ files, memoryBudgetBytes: BUDGET }));
  const script = fileURLToPath(new URL("./fixtures/bounded-read.ts", import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--max-old-space-size=256", script, job], { stdio: ["ignore", "pipe", "pipe"] });
    const out: Outcome[] = [];
    let text = "";
    let stderr = "";
    let done = false;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`reading ${files.length} hostile files did not finish within ${deadlineMs} ms (next: ${files[out.length]})`));
    }, deadlineMs);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
      let nl;
      while ((nl = text.indexOf("\n")) >= 0) {
        const m = JSON.parse(text.slice(0, nl)) as Outcome & { done?: boolean };
        text = text.slice(nl + 1);
        if (m.done) done = true;
        else out.push(m);
      }
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr = (stderr + c).slice(-4000)));
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (done && code === 0) resolve(out);
      else reject(new Error(`reader process ended (${signal ?? code}) after ${out.length} files; next: ${files[out.length]}: ${stderr}`));
    });
  });
}

function assertSafe(o: Outcome): void {
  assert.ok(o.ms < 20_000, `${o.file} took ${o.ms} ms`);
  if (o.ok) return;
  assert.ok(o.trajectoryError, `${o.file}: not a TrajectoryError: ${o.message}`);
  assert.ok(o.code === "corrupt_file" || o.code === "unsupported_codec", `${o.file}: code ${o.code}`);
  assert.ok(o.message!.startsWith(`${o.file}: `), `error must name the file: ${o.message}`);
}

/** zig-zag varint long. */
function long(n: number): Buffer {
  let z = BigInt.asUintN(64, (BigInt(Math.trunc(n)) << 1n) ^ (BigInt(Math.trunc(n)) < 0n ? -1n : 0n));
  const out: number[] = [];
  do {
    const b = Number(z & 0x7fn);
    z >>= 7n;
    out.push(z ? b | 0x80 : b);
  } while (z);
  return Buffer.from(out);
}

/** A container file from raw parts (header metadata, blocks of already-encoded data). */
function container(blocks: { count: number; data: Buffer; size?: number }[], meta: Record<string, Buffer> = {}, codec: CodecName = "null"): Buffer {
  const header = headerType.toBuffer({ magic: MAGIC, meta: { "avro.schema": Buffer.from(SCHEMA_JSON), "avro.codec": Buffer.from(codec), ...meta }, sync: SYNC });
  return Buffer.concat([header, ...blocks.flatMap((b) => [encodeBlockPrefix(b.count, b.size ?? b.data.length), b.data, SYNC])]);
}

const validRecord = (steps = 3) => type.toBuffer(episodeToAvro(syntheticEpisode(1, { steps }), 0));
/** The step record's `a11y` type: defined inside Step, referred to by name after the steps (v3 `initialA11y`). */
const stepFields = ((episodeSchema.fields.find((f) => f.name === "steps")!.type as { items: { fields: { name: string; type: unknown }[] } }).items.fields);
const a11yRecord = (stepFields.find((f) => f.name === "a11y")!.type as unknown[])[1];
/** The fields after `steps` (added in v2 and v3), encoded on their own: they follow the steps array in a record. */
const afterSteps = cachedAvroTypeFor({
  type: "record",
  name: "AfterSteps",
  namespace: "farm.test",
  fields: episodeSchema.fields
    .slice(episodeSchema.fields.findIndex((f) => f.name === "steps") + 1)
    .map((f) => (f.name === "initialA11y" ? { ...f, type: ["null", a11yRecord] } : f)) as typeof episodeSchema.fields,
});
/** The step fields after `ui` (added in v5), encoded on their own with nothing set: they end every step. */
const afterUi = cachedAvroTypeFor({
  type: "record",
  name: "AfterUi",
  namespace: "farm.test",
  fields: stepFields.slice(stepFields.findIndex((f) => f.name === "ui") + 1) as typeof episodeSchema.fields,
});
const afterUiBytes = afterUi.toBuffer({ settleMs: null, settleCapped: false, policyVersion: null, policyMs: null, instruction: null }).length;

/** A record with no steps and no counters, up to its steps array: it ends in counters' and steps' end markers (0x00 0x00). */
const emptyTail = () => {
  const e = episodeToAvro({ ...syntheticEpisode(2, { steps: 0 }), counters: {} }, 0);
  const b = type.toBuffer(e);
  const upToSteps = b.subarray(0, b.length - afterSteps.toBuffer(e).length);
  assert.deepEqual([...upToSteps.subarray(-2)], [0, 0]);
  return upToSteps;
};

function withExtraRecord(extra: Record<string, unknown>) {
  const e = episodeToAvro(syntheticEpisode(3, { steps: 1 }), 0);
  e.steps[0]!.extras = [{ name: "x", dtype: "INT32", shape: [], doubles: null, longs: null, strings: null, booleans: null, json: null, ...extra } as never];
  return e;
}

function withExtra(extra: Record<string, unknown>): Buffer {
  return type.toBuffer(withExtraRecord(extra));
}

/** v3: a record whose one step records a tree whose element list declares `count` entries (then 30 zero bytes). */
function a11yElementsDeclaring(count: number): Buffer {
  const e = withExtraRecord({});
  e.steps[0]!.a11y = { tree: "", elements: [] };
  const b = type.toBuffer(e);
  // The step ends: a11y branch 1, tree "", elements end marker, ui null, the v5 fields; then the steps array's end marker.
  const elementsAt = b.length - afterSteps.toBuffer(e).length - 3 - afterUiBytes;
  assert.deepEqual([...b.subarray(elementsAt - 2, elementsAt + 3)], [2, 0, 0, 0, 0]);
  return Buffer.concat([b.subarray(0, elementsAt), long(count), Buffer.alloc(30)]);
}

/** v3: a record whose one step's resolved UI action is `resolved` (text that should be JSON). */
function uiResolved(resolved: string): Buffer {
  const e = withExtraRecord({});
  e.steps[0]!.ui = { given: "{}", resolved, invalid: null };
  return type.toBuffer(e);
}

/** A record whose last step's `ui` union (before the v5 fields and the steps array's end marker) names branch `byte`. */
function lastStepFrameBranch(byte: number): Buffer {
  const e = withExtraRecord({});
  const b = type.toBuffer(e);
  b[b.length - afterSteps.toBuffer(e).length - 2 - afterUiBytes] = byte;
  return b;
}

describe("hostile Avro files", () => {
  it("hand-written lies about sizes each end in a clear error naming the file, within bounds", async () => {
    const dir = await tempDir("hostile-avro-");
    const tail = emptyTail();
    const head = tail.subarray(0, -2);
    const cases: Record<string, Buffer> = {
      "empty file": Buffer.alloc(0),
      "bad magic": Buffer.from("PK\x03\x04 not avro"),
      "magic only": MAGIC,
      "header declares a billion metadata entries": Buffer.concat([MAGIC, long(1e9), Buffer.alloc(64)]),
      "header declares 2^62 metadata entries": Buffer.concat([MAGIC, long(2 ** 62), Buffer.alloc(64)]),
      "header key of a gigabyte": Buffer.concat([MAGIC, long(1), long(1e9), Buffer.from("abc")]),
      "header varint never ends": Buffer.concat([MAGIC, Buffer.alloc(40, 0xff)]),
      "header without avro.schema": Buffer.concat([MAGIC, long(0), SYNC]),
      "schema is not JSON": container([], { "avro.schema": Buffer.from("{nope") }),
      "schema is a foreign record": container([], { "avro.schema": Buffer.from('{"type":"record","name":"X","fields":[{"name":"a","type":"int"}]}') }),
      "unknown codec": container([], {}, "zstandard-bomb" as CodecName),
      "block declares a billion records": container([{ count: 1e9, data: validRecord() }]),
      "block size beyond the budget": Buffer.concat([container([]), long(1), long(2 ** 40), Buffer.alloc(100)]),
      "negative block count": Buffer.concat([container([]), long(-5), long(10), Buffer.alloc(26)]),
      "truncated block": container([{ count: 1, data: validRecord() }]).subarray(0, -40),
      "bad sync marker": Buffer.concat([container([]), long(1), long(validRecord().length), validRecord(), Buffer.alloc(16, 9)]),
      "steps array declares a billion entries": container([{ count: 1, data: Buffer.concat([head, long(0), long(1e9), Buffer.alloc(30)]) }]),
      "counters map declares a billion entries": container([{ count: 1, data: Buffer.concat([head, long(1e9), Buffer.alloc(30)]) }]),
      "steps array declares negative block size": container([{ count: 1, data: Buffer.concat([head, long(0), long(-3), long(-7), Buffer.alloc(8)]) }]),
      "string length of a gigabyte": container([{ count: 1, data: Buffer.concat([long(1), long(1e9), Buffer.from("id")]) }]),
      "union branch out of range": container([{ count: 1, data: lastStepFrameBranch(0x7f) }]),
      "a11y element list declares a billion entries": container([{ count: 1, data: a11yElementsDeclaring(1e9) }]),
      "ui resolved that is not JSON": container([{ count: 1, data: uiResolved("{[") }]),
      "ui resolved that is not an object": container([{ count: 1, data: uiResolved("[1,2]") }]),
      "extras shape with a zero and a huge dimension": container([{ count: 1, data: withExtra({ shape: [1_000_000_000, 0], longs: [] }) }]),
      "extras shape of 2^31 x 2^31 x 0": container([{ count: 1, data: withExtra({ shape: [2 ** 31 - 1, 2 ** 31 - 1, 0], longs: [] }) }]),
      "extras shape with a negative dimension": container([{ count: 1, data: withExtra({ shape: [-1], longs: [] }) }]),
      "extras json that is not JSON": container([{ count: 1, data: withExtra({ json: "{[" }) }]),
      "trailing garbage after the last record": container([{ count: 1, data: Buffer.concat([validRecord(), Buffer.from([1, 2, 3])]) }]),
      "deflate block that is not deflate": container([{ count: 1, data: Buffer.from("definitely not deflate") }], {}, "deflate"),
      "deflate bomb (256 MiB of zeros)": container([{ count: 1, data: zlib.deflateRawSync(Buffer.alloc(256 * 1024 * 1024), { level: 9 }) }], {}, "deflate"),
      "snappy block declaring 4 GiB": container([{ count: 1, data: Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]), Buffer.alloc(8)]) }], {}, "snappy"),
      "snappy block shorter than its CRC": container([{ count: 1, data: Buffer.from([1, 2]) }], {}, "snappy"),
    };
    const files: string[] = [];
    for (const [name, bytes] of Object.entries(cases)) {
      const f = path.join(dir, `${name.replace(/[^a-z0-9]+/gi, "_")}.avro`);
      await writeFile(f, bytes);
      files.push(f);
    }
    const outcomes = await readBounded(files);
    assert.equal(outcomes.length, files.length);
    for (const o of outcomes) {
      assertSafe(o);
      assert.equal(o.ok, false, `${o.file} should be refused`);
    }
    const byName = new Map(outcomes.map((o, i) => [Object.keys(cases)[i]!, o.message!]));
    assert.match(byName.get("header declares a billion metadata entries")!, /metadata entries/);
    assert.match(byName.get("steps array declares a billion entries")!, /steps: declares 1000000000 entries/);
    assert.match(byName.get("extras shape with a zero and a huge dimension")!, /record 0.*steps\[0\] extra "x": shape \[1000000000, 0\] would build/);
    assert.match(byName.get("deflate bomb (256 MiB of zeros)")!, /block 0: block decompresses to more than the read budget/);
    assert.match(byName.get("block declares a billion records")!, /block 0: declares 1000000000 records/);
    assert.match(byName.get("a11y element list declares a billion entries")!, /steps\[0\]\.a11y\.elements: declares 1000000000 entries/);
    assert.match(byName.get("ui resolved that is not JSON")!, /steps\[0\]\.ui\.resolved is not JSON/);
    assert.match(byName.get("ui resolved that is not an object")!, /steps\[0\]\.ui\.resolved is not a JSON object/);
    console.log(`hostile Avro: ${files.length} hand-written cases`);
  });

  it("control bytes from a file are escaped when inspect prints them", async () => {
    const dir = await tempDir("hostile-avro-tty-");
    const rec = syntheticEpisode(4, { steps: 2, taskId: "evil\u001b[2J\u202etask" });
    await writeEpisodeFile(rec, { outDir: dir, partitionDate: "2026-01-01" });
    await writeFile(path.join(dir, "bad\u001b]0;pwned\u0007.avro"), Buffer.from("junk"));
    const text = formatSummary(await inspectTrajectories([dir]));
    assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    assert.match(text, /evil\\x1b\[2J\\u202etask/);
    assert.match(text, /unreadable: .*bad\\x1b\]0;pwned\\x07\.avro: /);
  });

  it("names from files never index plain objects: a task __proto__ and a cause constructor are counted as data", async () => {
    const dir = await tempDir("hostile-avro-proto-");
    const rec = { ...syntheticEpisode(5, { steps: 1, taskId: "__proto__" }), cause: "constructor" as never };
    await writeEpisodeFile(rec, { outDir: dir, partitionDate: "2026-01-01" });
    const s = await inspectTrajectories([dir]);
    assert.equal(Object.getOwnPropertyDescriptor(s.tasks, "__proto__")?.value, 1);
    assert.equal(Object.getOwnPropertyDescriptor(s.outcomes[rec.outcome]!, "constructor")?.value, 1);
    assert.equal(({} as Record<string, unknown>).constructor, Object, "Object.prototype untouched");
    assert.match(formatSummary(s), /tasks: __proto__=1/);
  });

  it("fast-check: mutated valid files of every codec read or fail cleanly (300 files)", async () => {
    const dir = await tempDir("hostile-avro-fc-");
    const originals = new Map<CodecName, Buffer>();
    for (const codec of ["null", "deflate", "snappy"] as CodecName[]) {
      // An agent episode (v3: trees, element lists, UI steps, an initial frame), so mutations reach the new fields too.
      const w = await writeEpisodeFile(syntheticEpisode(9, { steps: 4, frames: true, frameSize: 8, agent: true }), { path: path.join(dir, `orig-${codec}.avro`), codec, frameEvery: 2 });
      originals.set(codec, await readFile(w.path));
    }
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
      fc.record({ kind: fc.constant("varint" as const), at: fc.nat(), value: fc.oneof(fc.integer(), fc.constantFrom(1e9, -1e9, 2 ** 40, 2 ** 53, -1, 0)) }),
      fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), bytes: fc.uint8Array({ maxLength: 24 }) }),
    );
    const files: string[] = [];
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom<CodecName>("null", "deflate", "snappy"), fc.array(mutation, { minLength: 1, maxLength: 4 }), async (codec, muts) => {
        let b = Buffer.from(originals.get(codec)!);
        for (const m of muts) {
          const at = m.at % Math.max(1, b.length);
          if (m.kind === "flip") b[at] = m.byte;
          else if (m.kind === "truncate") b = b.subarray(0, at);
          else if (m.kind === "varint") b = Buffer.concat([b.subarray(0, at), long(m.value), b.subarray(at + 1)]);
          else b = Buffer.concat([b.subarray(0, at), Buffer.from(m.bytes), b.subarray(at)]);
        }
        const f = path.join(dir, `m${n++}.avro`);
        await writeFile(f, b);
        files.push(f);
      }),
      { numRuns: 300, seed: 12 },
    );
    const outcomes = await readBounded(files, 240_000);
    assert.equal(outcomes.length, files.length);
    for (const o of outcomes) assertSafe(o);
    const refused = outcomes.filter((o) => !o.ok).length;
    console.log(`hostile Avro: ${files.length} fast-check mutations, ${refused} refused, ${files.length - refused} still readable`);
    assert.ok(refused > files.length / 2);
  });
});
