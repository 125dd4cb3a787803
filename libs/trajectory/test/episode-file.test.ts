/** writeEpisodeFile: one episode per file under a fixed name, first writer wins, nothing half-written left. */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readdir, readFile, mkdir, stat, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { episodeFilePath, findEpisodeFile, listTrajectoryFiles, openTrajectoryFile, readEpisodeFile, readTrajectories, removeStaleEpisodeTempFiles, syntheticEpisode, TrajectoryError, writeEpisodeFile, type EpisodeRecord, type StoredEpisode } from "@farm/trajectory";
import { SCHEMA_VERSION } from "@farm/trajectory/testing";
import { avrocat, requireInteropTools, tempDir } from "./helpers.ts";

function attemptOf(n: number, o: { taskId?: string; campaignId?: string; episodeIndex?: number } = {}): EpisodeRecord {
  const base = syntheticEpisode(7, { steps: 4, frames: true, frameSize: 8, campaignId: o.campaignId ?? "camp", episodeIndex: o.episodeIndex ?? 3, taskId: o.taskId ?? "t" });
  // Attempts of one episode differ in attempt, start time and result.
  return { ...base, attempt: n, startedAt: new Date(base.startedAt.getTime() + n * 86_400_000), totalReward: base.totalReward + n };
}

/** Every file under dir, relative, hidden ones included. */
async function allFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir, { recursive: true });
  const files: string[] = [];
  for (const n of names) if ((await stat(path.join(dir, n))).isFile()) files.push(n);
  return files.sort();
}

describe("writeEpisodeFile", () => {
  it("creates a missing folder and returns the SHA-256 of the file it created, as the file on disk has it (not when the name was taken)", async () => {
    const out = await tempDir();
    for (const codec of ["null", "deflate"] as const) {
      const target = path.join(out, codec, "deep", "er", "ep.avro");
      const w = await writeEpisodeFile(attemptOf(1), { path: target, codec });
      assert.equal(w.created, true);
      assert.equal(w.checksum, `sha256:${createHash("sha256").update(await readFile(target)).digest("hex")}`);
      const again = await writeEpisodeFile(attemptOf(2), { path: target, codec });
      assert.equal(again.created, false);
      assert.equal(again.checksum, undefined);
    }
  });

  it("puts the episode at its fixed path: task and given date partition, escaped episode id", async () => {
    const out = await tempDir();
    const a = attemptOf(1, { taskId: "../odd/task id", campaignId: "camp.v2" });
    const expected = episodeFilePath({ outDir: out, taskId: a.taskId, date: new Date("2026-11-21T23:59:59.999Z"), episodeId: a.episodeId });
    assert.equal(path.relative(out, expected), "task=%2E%2E%2Fodd%2Ftask%20id/date=2026-11-21/camp.v2-3.avro");
    // The date is the caller's (e.g. when the job was added), not record.startedAt (a day later here).
    const w = await writeEpisodeFile(a, { outDir: out, partitionDate: "2026-11-21", codec: "snappy", frameEvery: 2 });
    assert.deepEqual({ ...w, checksum: undefined }, { path: expected, bytes: (await stat(expected)).size, created: true, checksum: undefined });
    assert.deepEqual(await allFiles(out), [path.relative(out, expected)], "no temporary left");
    assert.equal(await findEpisodeFile(out, a.taskId, a.episodeId), expected);
    assert.equal(await findEpisodeFile(out, a.taskId, "camp.v2-4"), undefined);
    assert.equal(await findEpisodeFile(out, "t", a.episodeId), undefined);
    assert.equal(await findEpisodeFile(path.join(out, "missing"), "t", a.episodeId), undefined);

    const opened = await openTrajectoryFile(expected);
    assert.equal(opened.info.codec, "snappy");
    assert.deepEqual(opened.info.meta, { "farm.schema.version": String(SCHEMA_VERSION), "farm.writer.id": a.worker, "farm.frame.every": "2" });
    const back = (await readEpisodeFile(expected))!;
    assert.equal(back.attempt, 1);
    assert.equal(back.steps.length, 4);
    assert.equal(back.frameEvery, 2, "frames of every 2nd step kept");
  });

  it("escapes episode ids into one visible file name", () => {
    const at = (episodeId: string) => path.basename(episodeFilePath({ outDir: "/o", taskId: "t", date: "2026-01-02", episodeId }));
    assert.equal(at("c_1.b-2"), "c_1.b-2.avro");
    assert.equal(at(".hidden"), "%2Ehidden.avro");
    assert.equal(at("../x"), "%2E.%2Fx.avro");
    assert.equal(at("a b%"), "a%20b%25.avro");
    assert.throws(() => episodeFilePath({ outDir: "/o", taskId: "t", date: "2026-02-31", episodeId: "e" }), (e: TrajectoryError) => e.code === "invalid_options");
    assert.throws(() => episodeFilePath({ outDir: "/o", taskId: "t", date: new Date(NaN), episodeId: "e" }), (e: TrajectoryError) => e.code === "invalid_options");
  });

  it("a later attempt does not replace the file; it gets the stored record", async () => {
    const out = await tempDir();
    const file = episodeFilePath({ outDir: out, taskId: "t", date: "2026-11-22", episodeId: "camp-3" });
    const first = await writeEpisodeFile(attemptOf(1), { path: file });
    const second = await writeEpisodeFile(attemptOf(2), { path: file, codec: "null" });
    assert.equal(first.created, true);
    assert.equal(second.created, false);
    assert.equal(second.path, file);
    assert.equal(second.bytes, first.bytes, "size of the file that stays");
    assert.equal(second.existing?.attempt, 1);
    assert.equal(second.existing?.file, file);
    assert.deepEqual(await allFiles(out), ["task=t/date=2026-11-22/camp-3.avro"]);
    assert.equal((await openTrajectoryFile(file)).info.codec, "deflate", "the first attempt's file, untouched");
  });

  it("concurrent attempts at one path: exactly one created, all agree on the stored record, readable by avrocat", async () => {
    requireInteropTools();
    const out = await tempDir();
    const file = episodeFilePath({ outDir: out, taskId: "t", date: "2026-11-22", episodeId: "camp-3" });
    const results = await Promise.all([1, 2, 3, 4].map((n) => writeEpisodeFile(attemptOf(n), { path: file })));
    assert.equal(results.filter((r) => r.created).length, 1);
    const stored: StoredEpisode[] = [];
    for await (const e of readTrajectories(out)) stored.push(e);
    assert.equal(stored.length, 1);
    for (const r of results.filter((x) => !x.created)) assert.deepEqual(r.existing, stored[0]);
    assert.deepEqual(await allFiles(out), ["task=t/date=2026-11-22/camp-3.avro"], "no temporary left by winner or losers");
    const viaAvrocat = avrocat(file) as { episodeId: string; attempt: number }[];
    assert.equal(viaAvrocat.length, 1);
    assert.equal(viaAvrocat[0]!.episodeId, "camp-3");
    assert.equal(viaAvrocat[0]!.attempt, stored[0]!.attempt);
  });

  it("noReplace: false replaces the file atomically", async () => {
    const out = await tempDir();
    const file = path.join(out, "x", "ep.avro");
    await writeEpisodeFile(attemptOf(1), { path: file });
    const w = await writeEpisodeFile(attemptOf(2), { path: file, noReplace: false });
    assert.equal(w.created, true);
    assert.equal((await readEpisodeFile(file))?.attempt, 2);
    assert.deepEqual(await allFiles(out), ["x/ep.avro"]);
  });

  it("rejects invalid names and records before writing anything", async () => {
    const out = await tempDir();
    const code = (c: string) => (e: unknown) => e instanceof TrajectoryError && e.code === c;
    await assert.rejects(writeEpisodeFile(attemptOf(1), { path: path.join(out, ".hidden.avro") }), code("invalid_options"));
    await assert.rejects(writeEpisodeFile(attemptOf(1), { path: path.join(out, "ep.avro.tmp") }), code("invalid_options"));
    await assert.rejects(writeEpisodeFile(attemptOf(1), { path: path.join(out, "ep.json") }), code("invalid_options"));
    await assert.rejects(writeEpisodeFile(attemptOf(1), { outDir: out, partitionDate: "22-11-2026" }), code("invalid_options"));
    await assert.rejects(writeEpisodeFile(attemptOf(1), { path: path.join(out, "e.avro"), frameEvery: -1 }), code("invalid_options"));
    const broken = { ...attemptOf(1), totalReward: "much" as unknown as number };
    await assert.rejects(writeEpisodeFile(broken, { path: path.join(out, "e.avro") }), code("invalid_record"));
    assert.deepEqual(await allFiles(out), []);
  });

  it("the episode files sit among TrajectoryWriter files; the reader lists them and skips temporaries", async () => {
    const out = await tempDir();
    const file = episodeFilePath({ outDir: out, taskId: "t", date: "2026-11-22", episodeId: "camp-3" });
    await writeEpisodeFile(attemptOf(1), { path: file });
    const dir = path.dirname(file);
    await writeFile(path.join(dir, ".camp-4.avro.0123456789abcdef.tmp"), "partial");
    const { files, skipped } = await listTrajectoryFiles([out]);
    assert.deepEqual(files, [file]);
    assert.deepEqual(skipped, [path.join(dir, ".camp-4.avro.0123456789abcdef.tmp")]);
  });
});

describe("removeStaleEpisodeTempFiles", () => {
  it("removes old episode temporaries only: not fresh ones, not TrajectoryWriter's, not published files", async () => {
    const out = await tempDir();
    const dir = path.join(out, "task=t", "date=2026-11-22");
    await mkdir(dir, { recursive: true });
    const old = new Date(Date.now() - 3_600_000);
    const names = {
      staleEpisodeTemp: ".camp-1.avro.0123456789abcdef.tmp",
      freshEpisodeTemp: ".camp-2.avro.fedcba9876543210.tmp",
      writerTemp: ".w1-000001.avro.tmp",
      published: "camp-1.avro",
    };
    for (const n of Object.values(names)) await writeFile(path.join(dir, n), "x");
    for (const n of [names.staleEpisodeTemp, names.writerTemp, names.published]) await utimes(path.join(dir, n), old, old);
    assert.equal(await removeStaleEpisodeTempFiles(out, 600_000), 1);
    assert.deepEqual((await readdir(dir)).sort(), [names.freshEpisodeTemp, names.writerTemp, names.published].sort());
    assert.equal(await removeStaleEpisodeTempFiles(path.join(out, "missing"), 0), 0);
  });
});
