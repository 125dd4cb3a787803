import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CODEC_NAMES, episodeIdOf, readTrajectories, syntheticEpisode, TrajectoryError, TrajectoryWriter, type EpisodeRecord, type StoredEpisode } from "@farm/trajectory";
import { SCHEMA_VERSION } from "@farm/trajectory/testing";
import { episodes, tempDir, writeEpisodes } from "./helpers.ts";

async function readAll(dir: string): Promise<StoredEpisode[]> {
  const out: StoredEpisode[] = [];
  for await (const e of readTrajectories(dir)) out.push(e);
  return out;
}

/** What the reader should return for a record written with `frameEvery`. */
function expected(r: EpisodeRecord, frameEvery: number): EpisodeRecord {
  return {
    ...r,
    // v2: a record that does not say how its frames are encoded is stored as png
    frameEncoding: r.frameEncoding ?? "png",
    resetKind: r.resetKind ?? "steps",
    // v3: the fields with a plain default are always there
    goal: r.goal ?? "",
    a11yEvery: r.a11yEvery ?? 0,
    invalidActions: r.invalidActions ?? 0,
    steps: r.steps.map((s) => {
      const { frame, ...rest } = s;
      return frame && frameEvery > 0 && s.index % frameEvery === 0 ? { ...rest, frame } : rest;
    }),
  };
}

function strip(e: StoredEpisode): EpisodeRecord {
  const { schemaVersion: _v, frameEvery: _f, file: _file, ...rec } = e;
  return { ...rec, steps: rec.steps.map((s) => (s.frame ? { ...s, frame: Buffer.from(s.frame) } : s)) };
}

describe("round trip", () => {
  for (const codec of CODEC_NAMES) {
    it(`${codec}: every field comes back, frames only on every k-th step`, async () => {
      const dir = await tempDir();
      const recs = episodes(6, { frames: true, steps: 12 });
      await writeEpisodes(dir, recs, { codec, frameEvery: 4 });
      const back = await readAll(dir);
      assert.equal(back.length, 6);
      for (const [i, e] of back.entries()) {
        assert.equal(e.schemaVersion, SCHEMA_VERSION);
        assert.equal(e.frameEvery, 4);
        assert.deepEqual(strip(e), expected(recs[i]!, 4));
        assert.deepEqual(e.steps.filter((s) => s.frame).map((s) => s.index), [4, 8, 12]);
      }
    });
  }

  it("v3: an agent episode's goal, trees, elements, UI steps, status, answer and invalid count come back", async () => {
    const dir = await tempDir();
    const recs = [0, 3, 4].map((seed) => ({ ...syntheticEpisode(seed, { agent: true, frames: true, steps: 9 }), frameEvery: 1 }));
    // A policy may leave extra keys on an element: only the schema's fields are stored.
    (recs[0]!.steps[0]!.a11y!.elements[0] as unknown as Record<string, unknown>).debug = "not stored";
    // The runner hands frames over as plain Uint8Arrays (views into larger buffers), not Buffers.
    const framed = new Uint8Array(recs[1]!.initialFrame!.byteLength + 8);
    framed.set(recs[1]!.initialFrame!, 4);
    recs[1]!.initialFrame = framed.subarray(4, 4 + recs[1]!.initialFrame!.byteLength);
    await writeEpisodes(dir, recs, { frameEvery: 1 });
    const back = await readAll(dir);
    assert.equal(back.length, 3);
    for (const [i, e] of back.entries()) {
      const r = recs[i]!;
      assert.equal(e.schemaVersion, SCHEMA_VERSION);
      assert.deepEqual([e.goal, e.a11yEvery, e.agentStatus, e.answer, e.invalidActions], [r.goal, 1, r.agentStatus, r.answer, r.invalidActions]);
      assert.ok(e.goal && e.goal.length > 0);
      assert.ok(Buffer.from(e.initialFrame!).equals(Buffer.from(r.initialFrame!)));
      assert.deepEqual(e.initialA11y, r.initialA11y);
      for (const [k, s] of e.steps.entries()) {
        assert.deepEqual(s.ui, r.steps[k]!.ui, `${e.episodeId} step ${s.index} ui`);
        assert.equal(s.a11y!.tree, r.steps[k]!.a11y!.tree);
        assert.deepEqual(s.a11y!.elements.map((x) => ({ ...x })), r.steps[k]!.a11y!.elements.map((x) => { const { debug: _d, ...rest } = x as unknown as Record<string, unknown>; return rest; }));
      }
    }
    assert.ok(back.some((e) => e.invalidActions! > 0) && back.some((e) => e.agentStatus === "complete"));
    assert.equal(back[0]!.steps[3]!.ui!.invalid, recs[0]!.steps[3]!.ui!.invalid);
    assert.equal(back[0]!.steps[3]!.ui!.resolved, undefined);
  });

  it("v3: a non-agent episode reads back with the plain defaults and no nullable agent fields; frameEvery 0 drops the initial frame too", async () => {
    const dir = await tempDir();
    await writeEpisodes(dir, [syntheticEpisode(1, { steps: 3 }), { ...syntheticEpisode(2, { agent: true, frames: true, steps: 3 }), frameEvery: 0 }]);
    const [plain, agent] = await readAll(dir);
    assert.deepEqual([plain!.goal, plain!.a11yEvery, plain!.invalidActions], ["", 0, 0]);
    for (const k of ["initialFrame", "initialA11y", "agentStatus", "answer"] as const) assert.ok(!(k in plain!), k);
    assert.ok(plain!.steps.every((s) => !("a11y" in s) && !("ui" in s)));
    assert.equal(agent!.initialFrame, undefined);
    assert.ok(agent!.initialA11y, "trees are not frames: kept");
  });

  it("a record's own frameEvery (the job's cadence) wins over the writer's", async () => {
    const dir = await tempDir();
    const rec = { ...syntheticEpisode(1, { frames: true, steps: 9 }), frameEvery: 3 };
    const w = await writeEpisodes(dir, [rec, syntheticEpisode(2, { frames: true, steps: 9 })]);
    const [first, second] = await readAll(dir);
    assert.deepEqual(first!.steps.filter((s) => s.frame).map((s) => s.index), [3, 6, 9]);
    assert.equal(first!.frameEvery, 3);
    assert.equal(second!.steps.filter((s) => s.frame).length, 0);
    assert.equal(w.stats.framesAppended, 3);
  });

  it("frameEvery 0 (default) stores no frames", async () => {
    const dir = await tempDir();
    await writeEpisodes(dir, episodes(2, { frames: true, steps: 5 }));
    for (const e of await readAll(dir)) assert.ok(e.steps.every((s) => s.frame === undefined));
  });

  it("extras of every kind keep value, dtype and shape (typed arrays or JSON fallback)", async () => {
    const dir = await tempDir();
    const rec = syntheticEpisode(1, { steps: 1 });
    const extras = [
      { name: "f", dtype: "FLOAT", shape: [2, 3], value: [[1.5, 2, 3], [4, 5, Number.NaN]] },
      { name: "i64", dtype: "INT64", shape: [], value: 9007199254740991 },
      { name: "u8", dtype: "UINT8", shape: [3], value: [0, 128, 255] },
      { name: "b", dtype: "BOOL", shape: [2], value: [true, false] },
      { name: "s", dtype: "STRING_U25", shape: [], value: "héllo" },
      { name: "obj", dtype: "OBJECT", shape: [], value: { a: [1, "x", null] } },
      { name: "irregular", dtype: "INT32", shape: [2], value: [1, 2, 3] },
      { name: "wrongleaf", dtype: "INT32", shape: [], value: 1.5 },
      { name: "empty", dtype: "DOUBLE", shape: [0], value: [] },
    ] as EpisodeRecord["steps"][number]["extras"];
    rec.steps[0]!.extras = extras;
    await writeEpisodes(dir, [rec]);
    const [back] = await readAll(dir);
    assert.deepEqual(back!.steps[0]!.extras, extras);
  });

  it("rejects an invalid record with invalid_record and keeps writing", async () => {
    const dir = await tempDir();
    const w = await TrajectoryWriter.open({ outDir: dir, writerId: "w1" });
    const bad = { ...syntheticEpisode(1, { steps: 2 }), episodeId: "something-else" };
    await assert.rejects(w.append(bad), (e: unknown) => e instanceof TrajectoryError && e.code === "invalid_record");
    const alsoBad = syntheticEpisode(2, { steps: 2 });
    (alsoBad as { taskHash: unknown }).taskHash = 42;
    await assert.rejects(w.append(alsoBad), (e: unknown) => e instanceof TrajectoryError && e.code === "invalid_record" && /taskHash/.test(e.message));
    await w.append(syntheticEpisode(3, { steps: 2 }));
    await w.close();
    await w.close(); // idempotent
    await assert.rejects(w.append(syntheticEpisode(4)), (e: unknown) => e instanceof TrajectoryError && e.code === "writer_closed");
    const back = await readAll(dir);
    assert.deepEqual(back.map((e) => e.episodeId), [episodeIdOf("campaign-synthetic", 3)]);
  });

  it("appends issued without awaiting are written in call order", async () => {
    const dir = await tempDir();
    const w = await TrajectoryWriter.open({ outDir: dir, writerId: "w1", blockBytes: 4096 });
    await Promise.all(episodes(30, { steps: 3 }).map((r) => w.append(r)));
    await w.close();
    assert.deepEqual((await readAll(dir)).map((e) => e.episodeIndex), Array.from({ length: 30 }, (_, i) => i));
  });
});
