/**
 * Schema evolution: the next version adds fields with defaults only. A file written with today's schema
 * must be read by a v2 reader (ours and python's), and a v2 file by today's reader.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { createWriteStream } from "node:fs";
import { describe, it } from "node:test";
import avro from "avsc";
import type { schema as AvroSchema } from "avsc";
import { avroTypeFor, episodeSchema, listTrajectoryFiles, readTrajectories, syntheticEpisode } from "@farm/trajectory";
import { SCHEMA_VERSION } from "@farm/trajectory/testing";
import { python, requireInteropTools, tempDir, writeEpisodes } from "./helpers.ts";

/** The v2 schema a future change might bring: one new defaulted field on Episode and one on Step. */
function nextVersionSchema(): AvroSchema.RecordType {
  const v2 = structuredClone(episodeSchema);
  v2.fields.push({ name: "emulatorImage", type: "string", default: "unknown", doc: "v2: system image of the device." });
  const steps = v2.fields.find((f) => f.name === "steps")!;
  const stepRecord = (steps.type as AvroSchema.ArrayType).items as AvroSchema.RecordType;
  stepRecord.fields.push({ name: "latencyMs", type: ["null", "long"], default: null, doc: "v2: action latency." });
  return v2;
}

/** The fields version 2 added (SCHEMA.md history). */
const V2_FIELDS = ["frameEncoding", "resetKind", "resetMs"];
/** The fields version 3 added: on Episode, and on Step. */
const V3_FIELDS = ["goal", "a11yEvery", "initialFrame", "initialA11y", "agentStatus", "answer", "invalidActions"];
const V3_STEP_FIELDS = ["a11y", "ui"];
/** The fields version 4 added (issue 41: scored by the device). */
const V4_FIELDS = ["params", "success", "checks", "scoreError"];
/** The fields version 5 added (issues 36–38: settling, groups, policy versions), on Episode and on Step. */
const V5_FIELDS = ["settle", "groupIndex", "groupMember", "groupSize", "firstPolicyVersion", "lastPolicyVersion", "stale"];
const V5_STEP_FIELDS = ["settleMs", "settleCapped", "policyVersion", "policyMs", "instruction"];

/** Today's schema as it was at `version` (SCHEMA.md history: later versions only added fields). */
function schemaOfVersion(version: 1 | 2 | 3 | 4): AvroSchema.RecordType {
  const s = structuredClone(episodeSchema);
  const drop = [...V5_FIELDS, ...(version < 4 ? V4_FIELDS : []), ...(version < 3 ? V3_FIELDS : []), ...(version < 2 ? V2_FIELDS : [])];
  s.fields = s.fields.filter((f) => !drop.includes(f.name));
  const stepRecord = (s.fields.find((f) => f.name === "steps")!.type as AvroSchema.ArrayType).items as AvroSchema.RecordType;
  const dropSteps = [...V5_STEP_FIELDS, ...(version < 3 ? V3_STEP_FIELDS : [])];
  stepRecord.fields = stepRecord.fields.filter((f) => !dropSteps.includes(f.name));
  return s;
}

describe("schema evolution", () => {
  it(`a v${SCHEMA_VERSION} file is read by the next version's reader (defaults filled)`, async () => {
    const dir = await tempDir();
    const recs = [syntheticEpisode(1, { steps: 5 }), syntheticEpisode(2, { steps: 5 })];
    await writeEpisodes(dir, recs);
    const v2 = nextVersionSchema();

    // Our reader, resolving into v2.
    const ours = [];
    for await (const e of readTrajectories(dir, { readerSchema: v2 })) ours.push(e);
    assert.deepEqual(ours.map((e) => e.episodeId), recs.map((r) => r.episodeId));

    // avsc's own decoder with v2 as reader schema sees the defaults.
    const { files } = await listTrajectoryFiles([dir]);
    const raw: Record<string, unknown>[] = [];
    const decoder = avro.createFileDecoder(files[0]!, { readerSchema: avroTypeFor(v2), parseHook: (s) => avroTypeFor(s as AvroSchema.AvroSchema) });
    for await (const r of decoder) raw.push(r as Record<string, unknown>);
    assert.equal(raw.length, 2);
    assert.equal(raw[0]!.emulatorImage, "unknown");
    assert.equal((raw[0]!.steps as Record<string, unknown>[])[0]!.latencyMs, null);
    assert.ok(raw[0]!.startedAt instanceof Date);

    // Python with v2 as its reader schema.
    requireInteropTools();
    const schemaFile = path.join(dir, "v2.avsc");
    await writeFile(schemaFile, JSON.stringify(v2));
    const py = python(
      `
import sys, json, avro.schema
from avro.datafile import DataFileReader
from avro.io import DatumReader
v2 = avro.schema.parse(open(sys.argv[2]).read())
with DataFileReader(open(sys.argv[1], "rb"), DatumReader(readers_schema=v2)) as r:
    recs = list(r)
print(json.dumps([[x["episodeId"], x["emulatorImage"], x["steps"][0]["latencyMs"]] for x in recs]))
`,
      files[0]!,
      schemaFile,
    );
    assert.deepEqual(JSON.parse(py), recs.map((r) => [r.episodeId, "unknown", null]));
  });

  it("a file written by the next version is read by today's reader (new fields ignored)", async () => {
    const dir = await tempDir();
    const v2 = nextVersionSchema();
    const v2Type = avroTypeFor(v2);
    const file = path.join(dir, "future.avro");
    const rec = syntheticEpisode(3, { steps: 2 });
    const value = {
      ...rec,
      schemaVersion: SCHEMA_VERSION + 1,
      emulatorImage: "android-34",
      taskDialect: rec.taskDialect ?? null,
      stepCount: rec.steps.length,
      frameEvery: 0,
      steps: rec.steps.map((s) => ({
        index: s.index,
        timeOffsetMs: s.timeOffsetMs,
        action: { actionType: s.action.actionType, x: s.action.touchPosition[0], y: s.action.touchPosition[1] },
        reward: s.reward,
        extras: s.extras.map((e) => ({ name: e.name, dtype: e.dtype, shape: e.shape, doubles: null, longs: null, strings: null, booleans: null, json: JSON.stringify(e.value) })),
        frame: null,
        latencyMs: 12,
      })),
    };
    const encoder = new avro.streams.BlockEncoder(v2Type, { codec: "deflate" });
    const done = pipeline(encoder, createWriteStream(file));
    encoder.end(value);
    await done;
    const back = [];
    for await (const e of readTrajectories(file)) back.push(e);
    assert.equal(back.length, 1);
    assert.equal(back[0]!.episodeId, rec.episodeId);
    assert.equal(back[0]!.schemaVersion, SCHEMA_VERSION + 1);
    assert.deepEqual(back[0]!.steps[1]!.extras, rec.steps[1]!.extras);
    assert.ok(!("emulatorImage" in back[0]!));
  });

  it("a version 1 file is read by today's reader with the v2 defaults (frameEncoding png, resetKind steps)", async () => {
    // Version 1 is today's schema without the fields versions 2 and 3 added (SCHEMA.md history).
    const v1 = schemaOfVersion(1);
    const dir = await tempDir();
    const file = path.join(dir, "v1.avro");
    const rec = syntheticEpisode(4, { steps: 2 });
    const value = {
      ...rec,
      schemaVersion: 1,
      taskDialect: rec.taskDialect ?? null,
      stepCount: rec.steps.length,
      frameEvery: 1,
      steps: rec.steps.map((s) => ({
        index: s.index,
        timeOffsetMs: s.timeOffsetMs,
        action: { actionType: s.action.actionType, x: s.action.touchPosition[0], y: s.action.touchPosition[1] },
        reward: s.reward,
        extras: [],
        frame: Buffer.from([0x89, 0x50, 0x4e, 0x47]),
      })),
    };
    const encoder = new avro.streams.BlockEncoder(avroTypeFor(v1), { codec: "deflate" });
    const done = pipeline(encoder, createWriteStream(file));
    encoder.end(value);
    await done;
    const back = [];
    for await (const e of readTrajectories(file)) back.push(e);
    assert.equal(back.length, 1);
    assert.equal(back[0]!.schemaVersion, 1);
    assert.equal(back[0]!.frameEncoding, "png");
    assert.equal(back[0]!.resetKind, "steps");
    assert.equal(back[0]!.resetMs, undefined);
    assert.deepEqual([...back[0]!.steps[0]!.frame!], [0x89, 0x50, 0x4e, 0x47]);
  });

  it("a version 2 file says how its frames are encoded and how the device was reset; a version 1 reader skips those fields", async () => {
    const dir = await tempDir();
    const rec = { ...syntheticEpisode(5, { steps: 2 }), frameEncoding: "jpeg:85", resetKind: "snapshot" as const, resetMs: 612.5 };
    await writeEpisodes(dir, [rec]);
    const back = [];
    for await (const e of readTrajectories(dir)) back.push(e);
    assert.equal(back[0]!.frameEncoding, "jpeg:85");
    assert.deepEqual([back[0]!.resetKind, back[0]!.resetMs], ["snapshot", 612.5]);
    const v1 = schemaOfVersion(1);
    const old = [];
    for await (const e of readTrajectories(dir, { readerSchema: v1 })) old.push(e);
    assert.equal(old[0]!.episodeId, rec.episodeId);
  });

  it("a version 2 file is read by today's reader with the v3 defaults: goal \"\", a11yEvery 0, invalidActions 0, no trees or UI steps", async () => {
    const dir = await tempDir();
    const file = path.join(dir, "v2.avro");
    const rec = syntheticEpisode(6, { steps: 3 });
    const value = {
      ...rec,
      schemaVersion: 2,
      taskDialect: rec.taskDialect ?? null,
      stepCount: rec.steps.length,
      frameEvery: 1,
      frameEncoding: "png",
      resetKind: "steps",
      resetMs: 12.5,
      steps: rec.steps.map((s) => ({
        index: s.index,
        timeOffsetMs: s.timeOffsetMs,
        action: { actionType: s.action.actionType, x: s.action.touchPosition[0], y: s.action.touchPosition[1] },
        reward: s.reward,
        extras: [],
        frame: Buffer.from([0x89, 0x50, 0x4e, 0x47, s.index]),
      })),
    };
    const encoder = new avro.streams.BlockEncoder(avroTypeFor(schemaOfVersion(2)), { codec: "deflate" });
    const done = pipeline(encoder, createWriteStream(file));
    encoder.end(value);
    await done;
    const back = [];
    for await (const e of readTrajectories(file)) back.push(e);
    assert.equal(back.length, 1);
    assert.equal(back[0]!.schemaVersion, 2);
    assert.equal(back[0]!.resetMs, 12.5);
    assert.deepEqual([back[0]!.goal, back[0]!.a11yEvery, back[0]!.invalidActions], ["", 0, 0]);
    for (const k of ["initialFrame", "initialA11y", "agentStatus", "answer"]) assert.ok(!(k in back[0]!), k);
    assert.deepEqual(back[0]!.steps.map((s) => [s.index, "a11y" in s, "ui" in s, s.frame?.[4]]), [[1, false, false, 1], [2, false, false, 2], [3, false, false, 3]]);
  });

  it("a version 3+ agent file is read by a version 2 reader schema (ours and python3-avro): the new fields are skipped", async () => {
    const dir = await tempDir();
    const recs = [0, 1].map((seed) => ({ ...syntheticEpisode(seed, { agent: true, frames: true, steps: 4 }), frameEvery: 2 }));
    await writeEpisodes(dir, recs, { frameEvery: 2 });
    const v2 = schemaOfVersion(2);
    const ours = [];
    for await (const e of readTrajectories(dir, { readerSchema: v2 })) ours.push(e);
    assert.deepEqual(ours.map((e) => [e.episodeId, e.schemaVersion, "goal" in e, e.steps.some((s) => "a11y" in s || "ui" in s)]), recs.map((r) => [r.episodeId, SCHEMA_VERSION, false, false]));
    assert.deepEqual(ours[0]!.steps.filter((s) => s.frame).map((s) => s.index), [2, 4]);

    requireInteropTools();
    const { files } = await listTrajectoryFiles([dir]);
    const schemaFile = path.join(dir, "v2.avsc");
    await writeFile(schemaFile, JSON.stringify(v2));
    const py = python(
      `
import sys, json, avro.schema
from avro.datafile import DataFileReader
from avro.io import DatumReader
v2 = avro.schema.parse(open(sys.argv[2]).read())
with DataFileReader(open(sys.argv[1], "rb"), DatumReader(readers_schema=v2)) as r:
    recs = list(r)
print(json.dumps([[x["episodeId"], x["schemaVersion"], "goal" in x, sorted(x["steps"][0].keys())] for x in recs]))
`,
      files[0]!,
      schemaFile,
    );
    const stepKeys = ["action", "extras", "frame", "index", "reward", "timeOffsetMs"];
    assert.deepEqual(JSON.parse(py), recs.map((r) => [r.episodeId, SCHEMA_VERSION, false, stepKeys]));
  });

  it("a version 4 scored file round-trips params (typed), success, checks and scoreError", async () => {
    const dir = await tempDir();
    const recs = [0, 1, 4].map((seed) => syntheticEpisode(seed, { scored: true, steps: 2 }));
    await writeEpisodes(dir, recs);
    const back = [];
    for await (const e of readTrajectories(dir)) back.push(e);
    back.sort((a, b) => a.episodeIndex - b.episodeIndex);
    assert.deepEqual(back.map((e) => [{ ...e.params }, e.success, e.checks, e.scoreError]), recs.map((r) => [{ ...r.params }, r.success, r.checks, r.scoreError]));
    assert.equal(back[2]!.success, undefined);
    assert.match(back[2]!.scoreError!, /no database/);
    // An episode without an instance keeps none of them.
    const plainDir = await tempDir();
    await writeEpisodes(plainDir, [syntheticEpisode(9, { steps: 1 })]);
    for await (const e of readTrajectories(plainDir)) for (const k of V4_FIELDS) assert.ok(!(k in e), k);
  });

  it("a version 3 file is read by today's reader without scores; a version 4 scored file by a version 3 reader schema (ours and python3-avro)", async () => {
    const dir = await tempDir();
    const file = path.join(dir, "v3.avro");
    const rec = syntheticEpisode(7, { steps: 2, agent: true });
    const v4Value = (await import("../src/episode-codec.ts")).episodeToAvro(rec, 0);
    const v3Value: Record<string, unknown> = { ...v4Value, schemaVersion: 3 };
    for (const k of V4_FIELDS) delete v3Value[k];
    const encoder = new avro.streams.BlockEncoder(avroTypeFor(schemaOfVersion(3)), { codec: "deflate" });
    const done = pipeline(encoder, createWriteStream(file));
    encoder.end(v3Value);
    await done;
    const back = [];
    for await (const e of readTrajectories(file)) back.push(e);
    assert.equal(back[0]!.schemaVersion, 3);
    assert.equal(back[0]!.goal, rec.goal);
    for (const k of V4_FIELDS) assert.ok(!(k in back[0]!), k);

    const scoredDir = await tempDir();
    const scored = [syntheticEpisode(2, { scored: true, steps: 2 })];
    await writeEpisodes(scoredDir, scored);
    const v3 = schemaOfVersion(3);
    const ours = [];
    for await (const e of readTrajectories(scoredDir, { readerSchema: v3 })) ours.push(e);
    assert.deepEqual(ours.map((e) => [e.episodeId, "success" in e, "checks" in e]), [[scored[0]!.episodeId, false, false]]);
    requireInteropTools();
    const { files } = await listTrajectoryFiles([scoredDir]);
    const schemaFile = path.join(scoredDir, "v3.avsc");
    await writeFile(schemaFile, JSON.stringify(v3));
    const py = python(
      `
import sys, json, avro.schema
from avro.datafile import DataFileReader
from avro.io import DatumReader
with DataFileReader(open(sys.argv[1], "rb"), DatumReader()) as r:
    full = list(r)
v3 = avro.schema.parse(open(sys.argv[2]).read())
with DataFileReader(open(sys.argv[1], "rb"), DatumReader(readers_schema=v3)) as r:
    old = list(r)
print(json.dumps([full[0]["params"], full[0]["success"], [c["name"] for c in full[0]["checks"]], "success" in old[0]]))
`,
      files[0]!,
      schemaFile,
    );
    assert.deepEqual(JSON.parse(py), [{ state: '"on"', level: "2", strict: "false" }, 1, ["wifi", "checks[1] answer"], false]);
  });
  it("a version 5 file round-trips settling, groups and policy versions, and a v4 reader schema skips them (ours and python3-avro)", async () => {
    const dir = await tempDir();
    const base = syntheticEpisode(3, { agent: true, steps: 2 });
    const rec = {
      ...base,
      settle: "events:quiet=200,cap=3000",
      groupIndex: 7,
      groupMember: 2,
      groupSize: 4,
      firstPolicyVersion: "v1",
      lastPolicyVersion: "v3",
      stale: "versions span 3 > max staleness 1",
      steps: base.steps.map((s, i) => ({ ...s, settleMs: 120.5 + i, settleCapped: i === 1, policyVersion: `v${i + 1}`, policyMs: 40, instruction: `step ${i}` })),
    };
    await writeEpisodes(dir, [rec]);
    const back = [];
    for await (const e of readTrajectories(dir)) back.push(e);
    const e = back[0]!;
    assert.deepEqual([e.settle, e.groupIndex, e.groupMember, e.groupSize, e.firstPolicyVersion, e.lastPolicyVersion, e.stale], ["events:quiet=200,cap=3000", 7, 2, 4, "v1", "v3", "versions span 3 > max staleness 1"]);
    assert.deepEqual(e.steps.map((s) => [s.settleMs, s.settleCapped ?? false, s.policyVersion, s.policyMs, s.instruction]), [[120.5, false, "v1", 40, "step 0"], [121.5, true, "v2", 40, "step 1"]]);

    const plainDir = await tempDir();
    await writeEpisodes(plainDir, [syntheticEpisode(4, { steps: 1 })]);
    for await (const p of readTrajectories(plainDir)) {
      for (const k of ["settle", "groupIndex", "groupMember", "groupSize", "firstPolicyVersion", "stale"]) assert.ok(!(k in p), k);
      assert.ok(!("settleMs" in p.steps[0]!) && !("policyVersion" in p.steps[0]!));
    }

    const v4 = schemaOfVersion(4);
    const old = [];
    for await (const o of readTrajectories(dir, { readerSchema: v4 })) old.push(o);
    assert.deepEqual(old.map((o) => ["groupIndex" in o, "settleMs" in o.steps[0]!]), [[false, false]]);
    requireInteropTools();
    const { files } = await listTrajectoryFiles([dir]);
    const schemaFile = path.join(dir, "v4.avsc");
    await writeFile(schemaFile, JSON.stringify(v4));
    const py = python(
      `
import sys, json, avro.schema
from avro.datafile import DataFileReader
from avro.io import DatumReader
v4 = avro.schema.parse(open(sys.argv[2]).read())
with DataFileReader(open(sys.argv[1], "rb"), DatumReader(readers_schema=v4)) as r:
    old = list(r)
print(json.dumps(["groupIndex" in old[0], "settleMs" in old[0]["steps"][0], old[0]["schemaVersion"]]))
`,
      files[0]!,
      schemaFile,
    );
    assert.deepEqual(JSON.parse(py), [false, false, SCHEMA_VERSION]);
  });
});
