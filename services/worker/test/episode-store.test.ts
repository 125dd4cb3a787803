/** The exactly-once commit on its own: deterministic path, first commit wins, lookups across dates. */
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

test("concurrent commits of one episode leave exactly one file; the loser gets the winner's record", async () => {
  const { store, out, done } = tmpStore();
  try {
    const file = store.finalPath("t", Date.UTC(2026, 10, 22), "camp-3");
    const a = { ...syntheticEpisode(1, { campaignId: "camp", episodeIndex: 3, steps: 5 }), episodeId: "camp-3", taskId: "t", attempt: 1 };
    const b = { ...a, attempt: 2, totalReward: a.totalReward + 1 };
    const results = await Promise.all([store.commit(a, file, 0), store.commit(b, file, 0)]);
    assert.equal(results.filter((r) => !r.alreadyCommitted).length, 1);
    const loser = results.find((r) => r.alreadyCommitted);
    const winner = results.find((r) => !r.alreadyCommitted)!;
    const eps = await readEpisodes(out);
    assert.equal(eps.length, 1);
    if (loser) assert.equal(loser.existing?.attempt, eps[0]!.attempt);
    assert.equal(winner.path, file);
    assert.deepEqual(listFiles(out), [file], "no staging or temporary files left");
    assert.equal(await store.findCommitted("t", "camp-3"), file);
    assert.equal(await store.findCommitted("t", "camp-4"), undefined);
    assert.equal(await store.findCommitted("other", "camp-3"), undefined);
    // A later commit (another day's job) is refused in favour of the existing record by the caller's lookup.
    assert.equal((await store.readCommitted(file))?.episodeId, "camp-3");
  } finally {
    done();
  }
});
