/**
 * The committed-episodes stream (issue 38) in a real Redis: the claim and the stream entry are one step (a retry that
 * finds the claim adds nothing, a claim refused for a lost lock adds nothing), consumer groups get each entry once, a
 * consumer that restarts resumes with its unacknowledged entries, and the stream is trimmed by length.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { EpisodeStreamConsumer, RedisCommitArbiter, episodeStreamKey, jobLockKey, streamGroups, type EpisodeClaim, type EpisodeStreamMessage, type RedisClient } from "../src/index.ts";
import { privateRedis } from "./private-redis.ts";

let redis: RedisClient;
privateRedis((client) => (redis = client));

const PREFIX = "{stream-test}";

function claimOf(i: number): EpisodeClaim {
  return { host: "h1", location: `/out/e${i}.avro`, checksum: `sha256:${i}`, bytes: 10, attempt: 1, atMs: Date.now(), result: { v: 1, outcome: "terminated", cause: "episode_end", steps: 3, reward: i % 2, worker: "h1", device: "emulator-5554" } };
}

function messageOf(campaignId: string, i: number): EpisodeStreamMessage {
  return { episodeId: `${campaignId}-${i}`, campaignId, episodeIndex: i, file: `/out/e${i}.avro`, host: "h1", outcome: "terminated", cause: "episode_end", steps: 3, reward: i % 2, success: 1, groupIndex: Math.floor(i / 4), groupMember: i % 4, groupSize: 4, committedAtMs: Date.now() };
}

test("the claim adds the stream entry in the same step: once per episode, never for a refused claim", async () => {
  const arbiter = new RedisCommitArbiter(redis, PREFIX);
  const c = "camp-a";
  const key = episodeStreamKey(PREFIX, c);
  for (let i = 0; i < 3; i++) assert.equal((await arbiter.claim({ campaignId: c, episodeIndex: i }, claimOf(i), undefined, messageOf(c, i))).kind, "claimed");
  // A retry after a crash (between the commit and its reply) finds the claim: nothing more on the stream.
  assert.equal((await arbiter.claim({ campaignId: c, episodeIndex: 1 }, claimOf(1), undefined, messageOf(c, 1))).kind, "taken");
  // An attempt whose job lock is someone else's: no claim, no entry.
  await redis.set(jobLockKey(PREFIX, `${c}-3`), "other-token");
  assert.equal((await arbiter.claim({ campaignId: c, episodeIndex: 3 }, claimOf(3), { jobId: `${c}-3`, token: "mine" }, messageOf(c, 3))).kind, "not-owner");
  assert.equal(await redis.xlen(key), 3);
  const consumer = EpisodeStreamConsumer.forCampaign(redis, PREFIX, c, "learner", "w1");
  const got = await consumer.read(10);
  assert.deepEqual(got.map((e) => e.message?.episodeId), [`${c}-0`, `${c}-1`, `${c}-2`], "in commit order");
  assert.deepEqual(got[2]!.message, { ...messageOf(c, 2), committedAtMs: got[2]!.message!.committedAtMs });
});

test("consumer groups: each entry once per group; a restarted consumer gets its unacknowledged entries first, then new ones", async () => {
  const arbiter = new RedisCommitArbiter(redis, PREFIX);
  const c = "camp-b";
  for (let i = 0; i < 5; i++) await arbiter.claim({ campaignId: c, episodeIndex: i }, claimOf(i), undefined, messageOf(c, i));
  const first = EpisodeStreamConsumer.forCampaign(redis, PREFIX, c, "learner", "w1");
  const a = await first.read(3);
  await first.ack(a.slice(0, 2).map((e) => e.id)); // the third was delivered, then the consumer died before its ack
  for (let i = 5; i < 7; i++) await arbiter.claim({ campaignId: c, episodeIndex: i }, claimOf(i), undefined, messageOf(c, i));
  const again = EpisodeStreamConsumer.forCampaign(redis, PREFIX, c, "learner", "w1");
  const seen: number[] = [];
  for (;;) {
    const got = await again.read(2);
    if (got.length === 0) break;
    seen.push(...got.map((e) => e.message!.episodeIndex));
    await again.ack(got.map((e) => e.id));
  }
  assert.deepEqual(seen, [2, 3, 4, 5, 6], "the unacknowledged one first, then the rest, none twice");
  const other = EpisodeStreamConsumer.forCampaign(redis, PREFIX, c, "evaluator", "e1");
  assert.equal((await other.read(100)).length, 7, "another group reads every entry");
  const groups = await streamGroups(redis, episodeStreamKey(PREFIX, c));
  const learner = groups.find((g) => g.name === "learner")!;
  assert.equal(learner.pending, 0);
  assert.equal(learner.lag, 0);
  assert.equal(groups.find((g) => g.name === "evaluator")!.pending, 7);
});

test("the stream is trimmed to about maxLen entries", async () => {
  const arbiter = new RedisCommitArbiter(redis, PREFIX, { maxLen: 10, maxAgeMs: 0 });
  const c = "camp-c";
  for (let i = 0; i < 500; i++) await arbiter.claim({ campaignId: c, episodeIndex: i }, claimOf(i), undefined, messageOf(c, i));
  const len = await redis.xlen(episodeStreamKey(PREFIX, c));
  assert.ok(len < 500 && len >= 10, `trimmed (MAXLEN ~ keeps whole macro nodes): ${len}`);
});
