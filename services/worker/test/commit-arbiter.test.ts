/**
 * The farm-wide commit on real Redis and real folders, window by window (the chaos test drives the same
 * code through whole processes): two hosts with their own folders, a claim refused to an attempt that lost
 * its job lock, a crash between publish and claim, and shared storage (both hosts in one folder).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { silentLogger } from "@farm/log";
import { createFarmMetrics } from "@farm/metrics";
import { createRedisClient, jobLockKey, RedisCommitArbiter, type EpisodeJobResult, type RedisClient } from "@farm/queue";
import { syntheticEpisode } from "@farm/trajectory";
import { claimFile, resolvePending, settleAgainstClaim, type CommitDeps } from "../src/commit-flow.ts";
import { EpisodeStore, reconcileFolders } from "../src/index.ts";
import { readEpisodes } from "./harness.ts";

let redis: LocalRedis;
let client: RedisClient;
let tmp: string;
let n = 0;
before(async () => {
  redis = await startRedis();
  client = createRedisClient(redis.url);
  tmp = mkdtempSync(path.join(os.tmpdir(), "farm-arbiter-"));
});
after(async () => {
  await client.quit();
  await redis.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** A host: its folder, store and commit deps, on a prefix of its own test. */
function host(name: string, prefix: string, folder = path.join(tmp, `${prefix.replace(/\W/g, "")}-${name}`)): CommitDeps & { out: string } {
  const store = new EpisodeStore(folder, "deflate");
  return { out: folder, store, arbiter: new RedisCommitArbiter(client, prefix), metrics: createFarmMetrics({ service: "t", collectDefault: false }), logger: silentLogger, workerName: name };
}

const result = (worker: string): EpisodeJobResult => ({ v: 1, outcome: "terminated", cause: "episode_end", steps: 3, reward: 1, worker, device: "d" });

/** One attempt on `h`: write and publish episode `index` of campaign "c" (with its pending marker). */
async function publish(h: CommitDeps, index: number, attempt: number) {
  const file = h.store.finalPath("t", Date.UTC(2026, 10, 23), `c-${index}`);
  await h.store.markPending({ campaignId: "c", episodeIndex: index, file });
  const rec = { ...syntheticEpisode(attempt, { campaignId: "c", episodeIndex: index, steps: 3 }), episodeId: `c-${index}`, taskId: "t", attempt, worker: h.workerName };
  return h.store.publish(rec, file, 0);
}

test("two hosts commit one episode: the first claim wins, the other host's file is quarantined and counted; reconcile is clean", async () => {
  const prefix = `{arb${++n}}`;
  const [a, b] = [host("A", prefix), host("B", prefix)];
  const ref = { campaignId: "c", episodeIndex: 0 };
  const pa = await publish(a, 0, 1);
  const pb = await publish(b, 0, 2);
  const ca = await claimFile(a, ref, pa, 1, result("A"), undefined);
  const cb = await claimFile(b, ref, pb, 2, result("B"), undefined);
  assert.equal(ca.kind, "claimed");
  assert.equal(cb.kind, "taken");
  assert.ok(cb.kind === "taken" && cb.claim.host === "A" && cb.claim.result.worker === "A", "the loser answers with the winner's result");
  if (cb.kind === "taken") assert.equal(await settleAgainstClaim(b, ref, pb.path, cb.claim, pb.checksum), true);
  assert.equal(await settleAgainstClaim(a, ref, pa.path, ca.claim, pa.checksum), false, "the claimed file stays");
  assert.equal((await readEpisodes(a.out)).length + (await readEpisodes(b.out)).length, 1, "one visible record across both folders");
  const stats = await a.arbiter.stats("c");
  assert.deepEqual([stats.committed, stats.quarantined], [1, 1]);
  const r = await reconcileFolders({ folders: [a.out, b.out], campaignId: "c", arbiter: a.arbiter, episodes: 1 });
  assert.deepEqual([r.claims, r.matched, r.duplicates.length, r.missing.length, r.extra.length], [1, 1, 0, 0, 0]);
});

test("a claim is refused to an attempt that no longer holds the job's lock (checked in the same Lua step)", async () => {
  const prefix = `{arb${++n}}`;
  const a = host("A", prefix);
  const ref = { campaignId: "c", episodeIndex: 1 };
  const p = await publish(a, 1, 1);
  const lock = jobLockKey(prefix, "c-1");
  await client.set(lock, "token-of-another-worker", "PX", 30_000);
  assert.deepEqual(await claimFile(a, ref, p, 1, result("A"), { jobId: "c-1", token: "my-old-token" }), { kind: "not-owner" });
  await client.del(lock); // expired: nobody holds it
  assert.deepEqual(await claimFile(a, ref, p, 1, result("A"), { jobId: "c-1", token: "my-old-token" }), { kind: "not-owner" });
  assert.equal(await a.arbiter.lookup(ref), undefined, "nothing was claimed");
  await client.set(lock, "my-token", "PX", 30_000);
  assert.equal((await claimFile(a, ref, p, 1, result("A"), { jobId: "c-1", token: "my-token" })).kind, "claimed");
});

test("a crash between publish and claim: the file waits while unclaimed, and is quarantined once another host's claim names another file", async () => {
  const prefix = `{arb${++n}}`;
  const [a, b] = [host("A", prefix), host("B", prefix)];
  const ref = { campaignId: "c", episodeIndex: 2 };
  await publish(a, 2, 1); // A dies here: published, marker left, never claimed
  assert.deepEqual(await resolvePending(a), { settled: 0, quarantined: 0, waiting: 1 }, "unclaimed: left alone (it may still be claimed)");
  const open = await reconcileFolders({ folders: [a.out], campaignId: "c", arbiter: a.arbiter, episodes: 3 });
  assert.deepEqual(open.extra.map((e) => [e.index, e.reason]), [[2, "unclaimed"]], "reconcile lists the unclaimed file");
  assert.ok(open.missing.some((m) => m.index === 2 && m.reason === "never-claimed"));
  const pb = await publish(b, 2, 2);
  assert.equal((await claimFile(b, ref, pb, 2, result("B"), undefined)).kind, "claimed");
  await b.store.clearPending(pb.path);
  assert.deepEqual(await resolvePending(a), { settled: 1, quarantined: 1, waiting: 0 });
  assert.equal((await readEpisodes(a.out)).length, 0);
  assert.equal((await readEpisodes(b.out)).length, 1);
  assert.deepEqual(await a.store.pendingMarkers(), []);
});

test("shared storage: both hosts publish into one folder; the second finds the first's file, both claim the same checksum, nothing is quarantined", async () => {
  const prefix = `{arb${++n}}`;
  const shared = path.join(tmp, `shared${n}`);
  const [a, b] = [host("A", prefix, shared), host("B", prefix, shared)];
  const ref = { campaignId: "c", episodeIndex: 3 };
  const pa = await publish(a, 3, 1); // A stalls before claiming
  const pb = await publish(b, 3, 2);
  assert.equal(pb.created, false, "the name was taken: B gets A's file");
  assert.equal(pb.checksum, pa.checksum);
  const cb = await claimFile(b, ref, pb, pb.existing!.attempt, result("B"), undefined);
  assert.equal(cb.kind, "claimed");
  const ca = await claimFile(a, ref, pa, 1, result("A"), undefined);
  assert.ok(ca.kind === "taken" && ca.claim.checksum === pa.checksum, "A sees its own file committed");
  assert.deepEqual(await resolvePending(a), { settled: 1, quarantined: 0, waiting: 0 });
  const eps = await readEpisodes(shared);
  assert.equal(eps.length, 1);
  assert.equal(eps[0]!.attempt, 1, "the record kept is the one published first");
});
