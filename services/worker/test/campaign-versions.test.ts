/**
 * A campaign's policy versions in Redis (issue 38): the RAISE script goes forward only (the same version changes
 * nothing, a lower whole number or a version raised before is refused, the list keeps the newest 1000), and a worker
 * host's cache asks Redis at most once per TTL per campaign, answering with the last value while it refreshes.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { createRedisClient, MAX_CAMPAIGN_VERSIONS, policyVersionsKey, raisePolicyVersion, readPolicyVersions, type RedisClient } from "@farm/queue";
import { sleep } from "@farm/time";
import { CampaignVersionCache } from "../src/campaign-versions.ts";

const PREFIX = "{versions-test}";
let redis: LocalRedis;
let client: RedisClient;

before(async () => {
  redis = await startRedis();
  client = createRedisClient(redis.url);
});
after(async () => {
  await client?.quit();
  await redis?.close();
});

test("raise: forward only, idempotent, bounded", async () => {
  assert.equal(await readPolicyVersions(client, PREFIX, "c1"), undefined);
  assert.deepEqual(await raisePolicyVersion(client, PREFIX, "c1", "3"), { result: "raised", current: "3", versions: 1 });
  assert.deepEqual(await raisePolicyVersion(client, PREFIX, "c1", "3"), { result: "same", current: "3", versions: 1 });
  assert.equal((await raisePolicyVersion(client, PREFIX, "c1", "2")).result, "lower");
  assert.equal((await raisePolicyVersion(client, PREFIX, "c1", "-7")).result, "lower");
  assert.deepEqual(await raisePolicyVersion(client, PREFIX, "c1", "ckpt-a"), { result: "raised", current: "ckpt-a", previous: "3", versions: 2 });
  assert.equal((await raisePolicyVersion(client, PREFIX, "c1", "3")).result, "seen", "3 was raised before");
  assert.equal((await raisePolicyVersion(client, PREFIX, "c1", "10")).result, "raised", "after a name, any new whole number");
  assert.equal((await raisePolicyVersion(client, PREFIX, "c1", "010")).result, "raised", "010 is a name, not a number");
  assert.deepEqual(await readPolicyVersions(client, PREFIX, "c1"), { current: "010", order: ["3", "ckpt-a", "10", "010"] });
  for (let i = 0; i < MAX_CAMPAIGN_VERSIONS + 5; i++) await raisePolicyVersion(client, PREFIX, "c2", String(i));
  assert.equal(await client.llen(policyVersionsKey(PREFIX, "c2")), MAX_CAMPAIGN_VERSIONS);
  assert.equal((await readPolicyVersions(client, PREFIX, "c2"))?.current, String(MAX_CAMPAIGN_VERSIONS + 4));
});

test("the host's cache: one Redis read per TTL per campaign; the last value while it refreshes", async () => {
  let reads = 0;
  const counting = new Proxy(client, {
    get(target, prop) {
      if (prop === "lrange") reads++;
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  const cache = new CampaignVersionCache(counting, PREFIX, 200);
  await raisePolicyVersion(client, PREFIX, "c3", "1");
  const firsts = await Promise.all(Array.from({ length: 20 }, () => cache.read("c3")));
  assert.ok(firsts.every((v) => v?.current === "1"));
  assert.equal(reads, 1, "concurrent first reads share one");
  await raisePolicyVersion(client, PREFIX, "c3", "2");
  assert.equal((await cache.read("c3"))?.current, "1", "within the TTL");
  await sleep(250);
  assert.equal((await cache.read("c3"))?.current, "1", "past the TTL: the last value, a refresh started");
  await sleep(50);
  assert.equal((await cache.read("c3"))?.current, "2");
  assert.equal(reads, 2);
  assert.equal(await cache.read("none"), undefined, "a campaign without versions");
});
