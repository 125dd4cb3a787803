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
