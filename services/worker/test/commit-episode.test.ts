/**
 * `commitEpisode`, the one commit of campaign jobs and remote worlds, on real Redis and real folders: whichever
 * origin claims second meets the same window (duplicate prevented and counted, its file quarantined, its
 * marker cleared); a lost lock commits nothing and leaves the marker; metrics carry the origin.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { silentLogger } from "@farm/log";
import { createFarmMetrics, type EpisodeOrigin } from "@farm/metrics";
import { createRedisClient, episodeStreamKey, jobLockKey, parseStreamFields, RedisCommitArbiter, type RedisClient } from "@farm/queue";
import { syntheticEpisode } from "@farm/trajectory";
import type { CommitDeps } from "../src/commit-flow.ts";
import { commitEpisode, type EpisodeCommit } from "../src/commit-episode.ts";
import { EpisodeStore } from "../src/index.ts";
import { readEpisodes } from "./harness.ts";

let redis: LocalRedis;
let client: RedisClient;
let tmp: string;
let n = 0;
before(async () => {
  redis = await startRedis();
  client = createRedisClient(redis.url);
  tmp = mkdtempSync(path.join(os.tmpdir(), "farm-commit-episode-"));
});
after(async () => {
  await client.quit();
  await redis.close();
  rmSync(tmp, { recursive: true, force: true });
});

type Host = CommitDeps & { out: string };

function host(name: string, prefix: string): Host {
  const out = path.join(tmp, `${prefix.replace(/\W/g, "")}-${name}`);
  return { out, store: new EpisodeStore(out, "deflate"), arbiter: new RedisCommitArbiter(client, prefix), metrics: createFarmMetrics({ service: "t", collectDefault: false }), logger: silentLogger, workerName: name };
}

/** Episode `index` of campaign (or world) "c" as host `h` would commit it; `seed` makes its bytes differ. */
function commitOf(h: Host, index: number, seed: number, origin: EpisodeOrigin, owner?: EpisodeCommit["owner"]): EpisodeCommit {
  const episodeId = `c-${index}`;
  const record = { ...syntheticEpisode(seed, { campaignId: "c", episodeIndex: index, steps: 3 }), episodeId, taskId: "t", attempt: 1, worker: h.workerName, frameEvery: 0 };
  const finalFile = h.store.finalPath("t", Date.UTC(2026, 10, 23), episodeId);
  return { ref: { campaignId: "c", episodeIndex: index }, record, finalFile, owner, taskId: "t", device: "emulator-5554", origin, jobId: owner?.jobId, log: silentLogger };
}

async function originCount(h: Host, origin: EpisodeOrigin): Promise<number> {
  const lines = (await h.metrics.metricsText()).split("\n").filter((l) => l.startsWith(`farm_episode_origins_total{origin="${origin}"`));
  return lines.reduce((sum, l) => sum + Number(l.split(" ").pop()), 0);
}

for (const [first, second] of [["campaign", "remote"], ["remote", "campaign"]] as const) {
  test(`a ${first} episode commits first: the ${second} commit of the same episode answers with its claim, counts a prevented duplicate and quarantines its own file`, async () => {
    const prefix = `{ce${++n}}`;
    const [a, b] = [host("A", prefix), host("B", prefix)];
    const won = await commitEpisode(a, commitOf(a, 0, 1, first));
    assert.equal(won.kind, "committed");
    const lost = await commitEpisode(b, commitOf(b, 0, 2, second));
    assert.ok(lost.kind === "taken", `the second commit is refused, got ${lost.kind}`);
    assert.equal(lost.claim.host, "A");
    assert.equal(lost.claim.result.worker, "A", "the loser answers with the winner's result");
    const stats = await a.arbiter.stats("c");
    assert.deepEqual([stats.committed, stats.duplicatesPrevented, stats.quarantined], [1, 1, 1]);
    assert.equal((await readEpisodes(a.out)).length + (await readEpisodes(b.out)).length, 1, "one visible record across both folders");
    assert.deepEqual([await a.store.pendingMarkers(), await b.store.pendingMarkers()], [[], []], "both markers are settled");
    assert.equal(await originCount(a, first), 1, `the committed episode counts as ${first}`);
    assert.equal(await originCount(b, second), 0, "the refused one is not an episode");
  });
}

test("a campaign attempt that no longer holds its job's lock commits nothing; its marker stays for the resolve pass", async () => {
  const prefix = `{ce${++n}}`;
  const a = host("A", prefix);
  await client.set(jobLockKey(prefix, "c-5"), "token-of-another-worker", "PX", 30_000);
  const out = await commitEpisode(a, commitOf(a, 5, 1, "campaign", { jobId: "c-5", token: "mine" }));
  assert.deepEqual(out, { kind: "not-owner" });
  assert.equal(await a.arbiter.lookup({ campaignId: "c", episodeIndex: 5 }), undefined, "nothing was claimed");
  assert.equal((await a.store.pendingMarkers()).length, 1);
  assert.equal(await originCount(a, "campaign"), 0);
});

test("a file already at the path (an earlier attempt's) is the one claimed, with its own result and attempt", async () => {
  const prefix = `{ce${++n}}`;
  const a = host("A", prefix);
  const earlier = commitOf(a, 7, 1, "remote");
  await a.store.publish({ ...earlier.record, attempt: 3, worker: "earlier" }, earlier.finalFile, 0);
  const out = await commitEpisode(a, commitOf(a, 7, 2, "remote"));
  assert.ok(out.kind === "committed", `got ${out.kind}`);
  assert.equal(out.result.worker, "earlier", "the stored record's result, not this run's");
  const claim = await a.arbiter.lookup({ campaignId: "c", episodeIndex: 7 });
  assert.equal(claim?.attempt, 3);
  assert.equal(await originCount(a, "remote"), 0, "the episode was counted by the attempt that wrote it");
});

test("the campaign's stream gets one entry per committed episode across worker crashes (after publish, after claim) and retries on other hosts", async () => {
  const prefix = `{ce${++n}}`;
  const [a, b] = [host("A", prefix), host("B", prefix)];
  const crashAt = (point: string) => ({ armed: [point], at: (p: string) => { if (p === point) throw new Error(`crash at ${p}`); } });
  const streamKey = episodeStreamKey(prefix, "c");
  // Episode 0: A publishes its file and dies before the claim (no commit, no entry); B runs it again and commits.
  await assert.rejects(commitEpisode(a, { ...commitOf(a, 0, 1, "campaign"), faults: crashAt("crash-after-publish") }), /crash at crash-after-publish/);
  assert.equal(await client.xlen(streamKey), 0, "published on A's storage, not committed: not on the stream");
  assert.equal((await commitEpisode(b, commitOf(b, 0, 2, "campaign"))).kind, "committed");
  // Episode 1: A commits and dies right after the claim; the retry on B finds the claim.
  await assert.rejects(commitEpisode(a, { ...commitOf(a, 1, 3, "campaign"), faults: crashAt("crash-after-claim") }), /crash at crash-after-claim/);
  assert.equal((await commitEpisode(b, commitOf(b, 1, 4, "campaign"))).kind, "taken");
  // A restarts: its leftover file of episode 0 is settled against B's claim; nothing more on the stream.
  assert.equal((await commitEpisode(a, commitOf(a, 0, 1, "campaign"))).kind, "taken");
  const entries = await client.xrange(streamKey, "-", "+");
  const messages = entries.map(([, fields]) => parseStreamFields(fields)!);
  assert.deepEqual(messages.map((m) => [m.episodeId, m.host]), [["c-0", "B"], ["c-1", "A"]], "one entry each, by the committing host, in commit order");
});
