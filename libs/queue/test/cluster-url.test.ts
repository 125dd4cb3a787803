/** REDIS_URL for a Redis Cluster: redis+cluster://[user:password@]h1:p1,h2:p2,… — parsed, checked, never echoing the password. */
import assert from "node:assert/strict";
import test from "node:test";
import { QueueError, validateRedisUrl } from "../src/index.ts";
import { isClusterUrl, parseRedisClusterUrl } from "@farm/queue/testing";

const LINK = { socketTimeout: 10_000, connectTimeout: 5000, keepAlive: 5000 };

test("a cluster URL names its seed nodes and shared credentials; rediss+cluster turns TLS on", () => {
  assert.equal(isClusterUrl("redis+cluster://a:7000"), true);
  assert.equal(isClusterUrl("redis://a:7000"), false);
  assert.deepEqual(parseRedisClusterUrl("redis+cluster://10.0.0.1:7000,10.0.0.2:7001,[::1]:7002"), {
    nodes: [{ host: "10.0.0.1", port: 7000 }, { host: "10.0.0.2", port: 7001 }, { host: "::1", port: 7002 }],
    redisOptions: LINK,
  });
  assert.deepEqual(parseRedisClusterUrl("rediss+cluster://farm:p%40ss@r1.example,r2.example:6380/"), {
    nodes: [{ host: "r1.example", port: 6379 }, { host: "r2.example", port: 6380 }],
    redisOptions: { username: "farm", password: "p@ss", tls: { servername: "r1.example" }, ...LINK },
  });
  assert.equal(parseRedisClusterUrl("redis+cluster://a:7000,b:7001?socket_timeout_ms=3000").redisOptions.socketTimeout, 3000);
});

test("bad cluster URLs fail with REDIS_URL_INVALID naming the problem, without the password", () => {
  const bad = (url: string, why: RegExp) =>
    assert.throws(() => validateRedisUrl(url), (e: unknown) => e instanceof QueueError && e.code === "REDIS_URL_INVALID" && why.test(e.message) && !e.message.includes("topsecret"));
  bad("redis+cluster://u:topsecret@", /no node/);
  bad("redis+cluster://u:topsecret@h:1/2", /no database/);
  bad("redis+cluster://h:99999", /port out of range/);
  bad("redis+cluster://h:1,bad host:2", /must be host:port/);
  assert.doesNotThrow(() => validateRedisUrl("redis+cluster://u:topsecret@h"));
});
