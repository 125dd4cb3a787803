/** The store on its own: deterministic path, first publish wins, lookups across dates, pending markers, quarantine. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { syntheticEpisode } from "@farm/trajectory";
import { EpisodeStore } from "../src/index.ts";
import { listFiles, readEpisodes } from "./harness.ts";

function tmpStore(): { store: EpisodeStore; out: string; done: () => void } {
  const out = mkdtempSync(path.join(os.tmpdir(), "farm-store-"));
  return { store: new EpisodeStore(out, "deflate"), out, done: () => rmSync(out, { recursive: true, force: true }) };
}

test("the final path depends only on task, job creation day and episode id", () => {
  const { store, out, done } = tmpStore();
  try {
    const t = Date.UTC(2026, 10, 22, 23, 59, 59);
    assert.equal(store.finalPath("classic_2048", t, "c1-7"), path.join(out, "task=classic_2048", "date=2026-11-22", "c1-7.avro"));
  } finally {
    done();
  }
});

test("concurrent publishes of one episode leave exactly one file; the loser gets the winner's record", async () => {
  const { store, out, done } = tmpStore();
  try {
    const file = store.finalPath("t", Date.UTC(2026, 10, 22), "camp-3");
    const a = { ...syntheticEpisode(1, { campaignId: "camp", episodeIndex: 3, steps: 5 }), episodeId: "camp-3", taskId: "t", attempt: 1 };
    const b = { ...a, attempt: 2, totalReward: a.totalReward + 1 };
    const results = await Promise.all([store.publish(a, file, 0), store.publish(b, file, 0)]);
    assert.equal(results.filter((r) => r.created).length, 1);
    const loser = results.find((r) => !r.created);
    const winner = results.find((r) => r.created)!;
    assert.equal(loser?.checksum, winner.checksum, "both report the checksum of the one file at the path");
    const eps = await readEpisodes(out);
    assert.equal(eps.length, 1);
    if (loser) assert.equal(loser.existing?.attempt, eps[0]!.attempt);
    assert.equal(winner.path, file);
    assert.deepEqual(listFiles(out), [file], "no staging or temporary files left");
    assert.equal(await store.findLocal("t", "camp-3"), file);
    assert.equal(await store.findLocal("t", "camp-4"), undefined);
    assert.equal(await store.findLocal("other", "camp-3"), undefined);
    // A later commit (another day's job) is refused in favour of the existing record by the caller's lookup.
    assert.equal((await store.readRecord(file))?.episodeId, "camp-3");
  } finally {
    done();
  }
});

test("pending markers list crashed attempts' files (not the ones being committed); quarantine hides a file from readers", async () => {
  const { store, out, done } = tmpStore();
  try {
    const file = store.finalPath("t", Date.UTC(2026, 10, 22), "camp-5");
    const ep = { ...syntheticEpisode(1, { campaignId: "camp", episodeIndex: 5, steps: 3 }), episodeId: "camp-5", taskId: "t", attempt: 1 };
    const finish = store.beginCommit(file);
    await store.markPending({ campaignId: "camp", episodeIndex: 5, file });
    assert.deepEqual(await store.pendingMarkers(), [], "a commit in progress here is not listed");
    finish();
    const listed = await store.pendingMarkers();
    assert.deepEqual(listed.map((m) => [m.campaignId, m.episodeIndex, m.file]), [["camp", 5, file]]);
    const p = await store.publish(ep, file, 0);
    assert.match(p.checksum, /^sha256:[0-9a-f]{64}$/);
    assert.equal(await store.quarantine(file, p.checksum), true);
    assert.equal((await readEpisodes(out)).length, 0, "readers do not see quarantined files");
    assert.ok(listFiles(out).some((f) => f.includes(`${path.sep}.quarantine${path.sep}`) && f.endsWith("camp-5.avro")));
    assert.equal(await store.quarantine(file, p.checksum), false, "a file already moved is reported, not an error");
    await store.clearPending(file);
    assert.deepEqual(await store.pendingMarkers(), []);
  } finally {
    done();
  }
});

test("a settled marker's file is reused for the next one: a short marker over a long one reads back whole, blanks are never listed, another process's old blanks are swept", async () => {
  const { store, out, done } = tmpStore();
  const other = new EpisodeStore(out, "deflate"); // another process sharing the folder
  const pendingDir = path.join(out, ".pending");
  const names = () => listFiles(pendingDir).map((f) => path.relative(pendingDir, f)).sort();
  try {
    const long = store.finalPath(`t-${"x".repeat(120)}`, Date.UTC(2026, 10, 22), "camp-1");
    const short = store.finalPath("t", Date.UTC(2026, 10, 22), "camp-2");
    await store.markPending({ campaignId: "camp", episodeIndex: 1, file: long });
    await store.clearPending(long);
    assert.deepEqual(await other.pendingMarkers(), []);
    await store.markPending({ campaignId: "camp", episodeIndex: 2, file: short });
    assert.deepEqual((await other.pendingMarkers()).map((m) => [m.campaignId, m.episodeIndex, m.file]), [["camp", 2, short]]);
    assert.deepEqual(names(), ["camp-2.avro.json"], "the blank became the marker");
    for (let i = 3; i < 40; i++) {
      await store.clearPending(i === 3 ? short : store.finalPath("t", 0, `camp-${i - 1}`));
      await store.markPending({ campaignId: "camp", episodeIndex: i, file: store.finalPath("t", 0, `camp-${i}`) });
    }
    await store.clearPending(store.finalPath("t", 0, "camp-39"));
    assert.equal(names().length, 1, "one marker at a time: one blank, however many episodes");
    assert.ok(names()[0]!.startsWith(".free"));
    assert.deepEqual(await other.pendingMarkers(), []);

    assert.equal(await other.sweepAbandonedTempFiles(0), 1, "a blank another process holds, once old, is swept");
    assert.deepEqual(names(), []);
    await store.markPending({ campaignId: "camp", episodeIndex: 40, file: short });
    assert.deepEqual((await other.pendingMarkers()).map((m) => m.episodeIndex), [40], "a swept blank is replaced by a new marker");
  } finally {
    done();
  }
});
