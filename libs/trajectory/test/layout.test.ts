import assert from "node:assert/strict";
import { readdir, stat, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { listTrajectoryFiles, readTrajectories, syntheticEpisode, TrajectoryError, TrajectoryWriter, type ClosedTrajectoryFile } from "@farm/trajectory";
import { escapePartitionValue, unescapePartitionValue } from "@farm/trajectory/testing";
import { episodes, tempDir, writeEpisodes } from "./helpers.ts";

async function countIn(file: string): Promise<number> {
  let n = 0;
  for await (const _ of readTrajectories(file)) n++;
  return n;
}

describe("layout and rotation", () => {
  it("partitions by task and UTC start date, names files <writer>-<seq>.avro", async () => {
    const dir = await tempDir();
    const day1 = new Date("2026-11-21T23:59:59.500Z");
    const day2 = new Date("2026-11-22T00:00:00.000Z");
    const closed: ClosedTrajectoryFile[] = [];
    await writeEpisodes(
      dir,
      [
        syntheticEpisode(0, { steps: 2, taskId: "classic_2048", startedAt: day1 }),
        syntheticEpisode(1, { steps: 2, taskId: "classic_2048", startedAt: day2 }),
        syntheticEpisode(2, { steps: 2, taskId: "../odd/task id=1%", startedAt: day2 }),
        syntheticEpisode(3, { steps: 2, taskId: "classic_2048", startedAt: day2 }),
      ],
      { writerId: "host-a.0", onFileClosed: (f) => closed.push(f) },
    );
    const { files } = await listTrajectoryFiles([dir]);
    const rel = files.map((f) => path.relative(dir, f)).sort();
    assert.deepEqual(rel, [
      "task=%2E%2E%2Fodd%2Ftask%20id%3D1%25/date=2026-11-22/host-a.0-000001.avro",
      "task=classic_2048/date=2026-11-21/host-a.0-000001.avro",
      "task=classic_2048/date=2026-11-22/host-a.0-000001.avro",
    ]);
    assert.equal(unescapePartitionValue(escapePartitionValue("../odd/task id=1%")), "../odd/task id=1%");
    assert.equal(await countIn(path.join(dir, "task=classic_2048/date=2026-11-22")), 2);
    assert.equal(closed.length, 3);
    const c = closed.find((f) => f.date === "2026-11-22" && f.taskId === "classic_2048")!;
    assert.deepEqual(c.episodeIds, ["campaign-synthetic-1", "campaign-synthetic-3"]);
    assert.equal(c.bytes, (await stat(c.path)).size);
  });

  it("rotates by episode count", async () => {
    const dir = await tempDir();
    const w = await writeEpisodes(dir, episodes(10, { steps: 3 }), { maxEpisodesPerFile: 4 });
    const { files } = await listTrajectoryFiles([dir]);
    assert.deepEqual(files.map((f) => path.basename(f)), ["w1-000001.avro", "w1-000002.avro", "w1-000003.avro"]);
    assert.deepEqual(await Promise.all(files.map(countIn)), [4, 4, 2]);
    assert.equal(w.stats.filesClosed, 3);
    assert.equal(w.stats.episodesAppended, 10);
    assert.equal(w.stats.bytesClosed, (await Promise.all(files.map((f) => stat(f)))).reduce((n, s) => n + s.size, 0));
  });

  for (const codec of ["null", "deflate"] as const) {
    it(`rotates by size (${codec}, frames included) and keeps files under the limit`, async () => {
      const dir = await tempDir();
      const maxFileBytes = 300_000;
      const recs = episodes(12, { steps: 20, frames: true });
      await writeEpisodes(dir, recs, { codec, maxFileBytes, frameEvery: 1, blockBytes: 32 * 1024 });
      const { files } = await listTrajectoryFiles([dir]);
      assert.ok(files.length >= 3, `expected several files, got ${files.length}`);
      let total = 0;
      for (const f of files) {
        const size = (await stat(f)).size;
        assert.ok(size <= maxFileBytes * 1.01, `${f} has ${size} bytes`);
        total += await countIn(f);
      }
      assert.equal(total, 12);
    });
  }

  it("a restarted writer continues the sequence instead of replacing files", async () => {
    const dir = await tempDir();
    await writeEpisodes(dir, episodes(2, { steps: 2 }));
    await writeEpisodes(dir, episodes(2, { steps: 2 }, 2));
    const { files } = await listTrajectoryFiles([dir]);
    assert.deepEqual(files.map((f) => path.basename(f)), ["w1-000001.avro", "w1-000002.avro"]);
  });

  it("readers skip temporary and hidden files, in folders and when named explicitly", async () => {
    const dir = await tempDir();
    await writeEpisodes(dir, episodes(1, { steps: 2 }));
    const part = path.join(dir, "task=classic_2048", "date=2026-11-22");
    await writeFile(path.join(part, ".w9-000001.avro.tmp"), "partial");
    await writeFile(path.join(part, "w9-000002.avro.tmp"), "partial");
    await mkdir(path.join(dir, ".hidden"));
    await writeFile(path.join(dir, ".hidden", "x.avro"), "junk");
    const listing = await listTrajectoryFiles([dir, path.join(part, ".w9-000001.avro.tmp")]);
    assert.equal(listing.files.length, 1);
    assert.equal(listing.skipped.length, 4);
    assert.equal(await countIn(dir), 1);
    assert.ok((await readdir(part)).includes(".w9-000001.avro.tmp"));
  });

  it("rejects bad options with invalid_options", async () => {
    const dir = await tempDir();
    for (const bad of [{ writerId: ".x" }, { writerId: "a/b" }, { codec: "zstd" }, { frameEvery: -1 }, { maxFileBytes: 0 }]) {
      await assert.rejects(
        TrajectoryWriter.open({ outDir: dir, writerId: "w", ...(bad as object) }),
        (e: unknown) => e instanceof TrajectoryError && e.code === "invalid_options",
      );
    }
  });

  it("closes a file by age while the writer is idle (episodes become visible without close)", async () => {
    const dir = await tempDir();
    const closed: ClosedTrajectoryFile[] = [];
    const w = await TrajectoryWriter.open({ outDir: dir, writerId: "w1", maxFileAgeMs: 100, onFileClosed: (f) => closed.push(f) });
    await w.append(syntheticEpisode(1, { steps: 2 }));
    assert.equal((await listTrajectoryFiles([dir])).files.length, 0);
    // Polls rather than sleeping a fixed time: robust on a loaded machine.
    for (let waited = 0; closed.length === 0 && waited < 5000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    assert.equal(closed.length, 1);
    assert.equal(await countIn(dir), 1);
    await w.append(syntheticEpisode(2, { steps: 2 }));
    await w.close();
    assert.equal((await listTrajectoryFiles([dir])).files.length, 2);
  });

  it("closes the least recently used partition beyond maxOpenFiles", async () => {
    const dir = await tempDir();
    const w = await TrajectoryWriter.open({ outDir: dir, writerId: "w1", maxOpenFiles: 2 });
    for (const t of ["a", "b", "c", "a"]) await w.append(syntheticEpisode(t.charCodeAt(0) + w.stats.episodesAppended * 10, { steps: 1, taskId: t }));
    assert.equal(w.stats.openFiles, 2);
    assert.equal(w.stats.filesClosed, 2);
    await w.close();
    assert.equal((await listTrajectoryFiles([dir])).files.length, 5 - 1);
  });
});
