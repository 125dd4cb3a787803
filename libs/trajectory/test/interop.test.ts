/**
 * Files written with each codec are read by readers that share no code with ours: avro-c's `avrocat`
 * (Debian avro-bin) and Python's avro package (python3-avro, python3-snappy). Missing tools fail the test.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, it } from "node:test";
import { statSync } from "node:fs";
import { CODEC_NAMES, listTrajectoryFiles, readTrajectories, syntheticEpisode, writeEpisodeFile, type EpisodeRecord } from "@farm/trajectory";
import { SCHEMA_VERSION } from "@farm/trajectory/testing";
import { avrocat, python, requireInteropTools, tempDir, writeEpisodes } from "./helpers.ts";

const PY_SUMMARY = `
import json, sys
from avro.datafile import DataFileReader
from avro.io import DatumReader
with DataFileReader(open(sys.argv[1], "rb"), DatumReader()) as r:
    recs = list(r)
    meta = {k: v.decode() for k, v in r.meta.items() if k.startswith("farm.") or k == "avro.codec"}
out = {
    "meta": meta,
    "count": len(recs),
    "ids": [x["episodeId"] for x in recs],
    "startedAt": [x["startedAt"].isoformat() for x in recs],
    "outcome": [x["outcome"] for x in recs],
    "frames": [[s["index"], len(s["frame"]), s["frame"][:8].hex()] for s in recs[0]["steps"] if s["frame"] is not None],
    "extras0": recs[0]["steps"][0]["extras"],
    "reward": [x["totalReward"] for x in recs],
}
print(json.dumps(out))
`;

interface PySummary {
  meta: Record<string, string>;
  count: number;
  ids: string[];
  startedAt: string[];
  outcome: string[];
  frames: [number, number, string][];
  extras0: { name: string; dtype: string; shape: number[]; longs: number[] | null; doubles: number[] | null; strings: string[] | null; booleans: boolean[] | null; json: string | null }[];
  reward: number[];
}

const PNG_SIGNATURE_HEX = "89504e470d0a1a0a";

describe("interop with avrocat (avro-c) and python3-avro", () => {
  const records: EpisodeRecord[] = Array.from({ length: 7 }, (_, i) => syntheticEpisode(i, { steps: 30, frames: true }));
  records[0]!.steps[0]!.extras.push({ name: "meta", dtype: "OBJECT", shape: [], value: { level: 3 } });

  for (const codec of CODEC_NAMES) {
    it(`${codec}: counts and field values agree`, async () => {
      requireInteropTools();
      const dir = await tempDir();
      await writeEpisodes(dir, records, { codec, frameEvery: 10 });
      const { files } = await listTrajectoryFiles([dir]);
      assert.equal(files.length, 1);
      const file = files[0]!;

      const cat = avrocat(file) as Record<string, unknown>[];
      assert.equal(cat.length, records.length, "avrocat record count");
      assert.deepEqual(cat.map((r) => r.episodeId), records.map((r) => r.episodeId));
      assert.deepEqual(cat.map((r) => r.startedAt), records.map((r) => r.startedAt.getTime()), "timestamp-millis as epoch ms");
      assert.deepEqual(cat.map((r) => r.stepCount), records.map((r) => r.steps.length));
      const catStep = (cat[0]!.steps as Record<string, unknown>[])[9]!;
      assert.ok(catStep.frame && typeof catStep.frame === "object", "frame present on step 10 (a union branch)");

      const py = JSON.parse(python(PY_SUMMARY, file)) as PySummary;
      assert.equal(py.count, records.length, "python record count");
      assert.equal(py.meta["avro.codec"], codec);
      assert.equal(py.meta["farm.schema.version"], String(SCHEMA_VERSION));
      assert.deepEqual(py.ids, records.map((r) => r.episodeId));
      assert.deepEqual(py.startedAt, records.map((r) => r.startedAt.toISOString().replace(".000Z", "+00:00")), "python sees a datetime");
      assert.deepEqual(py.outcome, records.map((r) => r.outcome));
      assert.deepEqual(py.reward, records.map((r) => r.totalReward));
      const frame10 = records[0]!.steps[9]!.frame!;
      assert.deepEqual(py.frames.map((f) => f[0]), [10, 20, 30]);
      assert.deepEqual(py.frames[0], [10, frame10.length, PNG_SIGNATURE_HEX]);
      const [score, board, direction, q, moved] = py.extras0;
      const ex = records[0]!.steps[0]!.extras;
      assert.deepEqual(score, { name: "score", dtype: "INT32", shape: [], doubles: null, longs: [ex[0]!.value as number], strings: null, booleans: null, json: null });
      assert.deepEqual(board!.longs, (ex[1]!.value as number[][]).flat());
      assert.deepEqual(board!.shape, [4, 4]);
      assert.deepEqual(direction!.strings, [ex[2]!.value]);
      assert.deepEqual(q!.doubles, ex[3]!.value);
      assert.deepEqual(moved!.booleans, [ex[4]!.value]);
      assert.equal(py.extras0[5]!.json, JSON.stringify({ level: 3 }));
    });
  }

  it("deflate: a one-episode file, its small block compressed on the calling thread, reads the same", async () => {
    requireInteropTools();
    const dir = await tempDir();
    const episode = syntheticEpisode(3, { steps: 5 });
    const { path: file } = await writeEpisodeFile(episode, { path: path.join(dir, "one.avro"), codec: "deflate" });
    assert.ok(statSync(file).size < 16 * 1024, "a small episode: one small block");
    assert.deepEqual((avrocat(file) as Record<string, unknown>[]).map((r) => [r.episodeId, r.stepCount]), [[episode.episodeId, 5]]);
    const py = JSON.parse(python(PY_SUMMARY, file)) as PySummary;
    assert.deepEqual([py.meta["avro.codec"], py.ids, py.reward], ["deflate", [episode.episodeId], [episode.totalReward]]);
  });

  for (const codec of ["snappy", "deflate"] as const) {
    it(`our reader reads a file re-encoded by avro-c (avromod --codec=${codec})`, async () => {
      requireInteropTools();
      const dir = await tempDir();
      await writeEpisodes(dir, records, { codec: "null", frameEvery: 10 });
      const { files } = await listTrajectoryFiles([dir]);
      const converted = path.join(dir, `converted-${codec}.avro`);
      // avro-c needs a block at least as large as one record.
      execFileSync("avromod", [`--codec=${codec}`, "--block-size=4194304", files[0]!, converted]);
      const back = [];
      for await (const e of readTrajectories(converted)) back.push(e);
      assert.deepEqual(back.map((e) => e.episodeId), records.map((r) => r.episodeId));
      assert.deepEqual(back[0]!.steps[9]!.frame, records[0]!.steps[9]!.frame);
      assert.deepEqual(back[0]!.steps[0]!.extras, records[0]!.steps[0]!.extras);
      assert.deepEqual(back.map((e) => e.startedAt), records.map((r) => r.startedAt));
    });
  }

  it("v3: an agent episode's goal, elements, UI steps and initial frame read the same in avrocat and python3-avro", async () => {
    requireInteropTools();
    const dir = await tempDir();
    const agent = [0, 3].map((seed) => ({ ...syntheticEpisode(seed, { agent: true, frames: true, steps: 6 }), frameEvery: 1 }));
    await writeEpisodes(dir, agent, { codec: "deflate", frameEvery: 1 });
    const { files } = await listTrajectoryFiles([dir]);
    const cat = avrocat(files[0]!) as Record<string, unknown>[];
    assert.deepEqual(cat.map((r) => [r.episodeId, r.goal, r.invalidActions]), agent.map((r) => [r.episodeId, r.goal, r.invalidActions]));
    const py = JSON.parse(
      python(
        `
import json, sys
from avro.datafile import DataFileReader
from avro.io import DatumReader
with DataFileReader(open(sys.argv[1], "rb"), DatumReader()) as r:
    recs = list(r)
print(json.dumps([{
    "version": x["schemaVersion"], "goal": x["goal"], "a11yEvery": x["a11yEvery"], "status": x["agentStatus"], "answer": x["answer"],
    "invalid": x["invalidActions"], "initialFrame": x["initialFrame"][:8].hex(), "initialElements": [e["text"] for e in x["initialA11y"]["elements"]],
    "tree": json.loads(x["steps"][0]["a11y"]["tree"])["v"], "bounds": x["steps"][0]["a11y"]["elements"][1]["bounds"],
    "ui": [[s["ui"]["given"], s["ui"]["resolved"] and json.loads(s["ui"]["resolved"]), s["ui"]["invalid"]] for s in x["steps"]],
} for x in recs]))
`,
        files[0]!,
      ),
    ) as Record<string, unknown>[];
    assert.deepEqual(
      py,
      agent.map((r) => ({
        version: SCHEMA_VERSION, goal: r.goal, a11yEvery: 1, status: r.agentStatus ?? null, answer: r.answer ?? null, invalid: r.invalidActions,
        initialFrame: PNG_SIGNATURE_HEX, initialElements: r.initialA11y!.elements.map((e) => e.text),
        tree: 1, bounds: r.steps[0]!.a11y!.elements[1]!.bounds,
        ui: r.steps.map((s) => [s.ui!.given, s.ui!.resolved ?? null, s.ui!.invalid ?? null]),
      })),
    );
  });
});
