/**
 * The command census of `farm bench net --census`: what a client sends Redis is counted by kind, a BullMQ
 * script under its own name, our scripts by their first key, and commands run inside a script not at all.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { startRedis } from "@farm/local-services";
import { LuaScript, createRedisClient } from "@farm/queue";
import { pollUntil } from "@farm/time";
import { CommandCensus, perEpisode } from "../src/net-lab/command-census.ts";

/** BullMQ's getCounts script text (read-only), as BullMQ ships it. */
function bullGetCounts(): string {
  const require = createRequire(import.meta.url);
  const file = path.join(path.dirname(require.resolve("bullmq/package.json")), "dist/esm/scripts/getCounts-1.js");
  const m = /const content = `([\s\S]*?)`;\nexport const/.exec(readFileSync(file, "utf8"));
  assert.ok(m, `no script text in ${file}`);
  return m[1]!.replace(/\\`/g, "`").replace(/\\\\/g, "\\");
}

test("census: commands by kind and key, BullMQ's scripts by name, ours by key, none from inside scripts", { timeout: 60_000 }, async () => {
  const redis = await startRedis();
  const client = createRedisClient(redis.url);
  const census = await CommandCensus.start(client);
  try {
    await client.hget("{t}:campaign:c1:claims", "1");
    await client.hget("{t}:campaign:c1:claims", "2");
    await new LuaScript("return redis.call('HGET', KEYS[1], ARGV[1])").run(client, ["{t}:campaign:c1:claims"], ["3"]);
    const sha = (await client.script("LOAD", bullGetCounts())) as string;
    await client.evalsha(sha, 1, "{t}:episodes:", "wait", "active");
    await client.ping();
    const seen = await pollUntil(() => census.counted().hosts.has("ping"), { timeoutMs: 20_000, intervalMs: 20 });
    assert.ok(seen, `the census saw no PING: ${JSON.stringify([...census.counted().hosts])}`);
    const hosts = census.close().hosts;
    assert.equal(hosts.get("hget(…:claims)"), 2);
    assert.equal(hosts.get("getCounts"), 1, `BullMQ's script by name: ${JSON.stringify([...hosts])}`);
    // The first run of our script may be answered NOSCRIPT and sent again with EVAL: at least one, by key.
    assert.ok((hosts.get("evalsha(…:claims)") ?? 0) + (hosts.get("eval(…:claims)") ?? 0) >= 1, JSON.stringify([...hosts]));
    assert.ok(![...hosts.keys()].some((k) => k.startsWith("llen") || k.startsWith("lindex")), `a script's own commands were counted: ${JSON.stringify([...hosts])}`);
    assert.match(perEpisode(hosts, 2), /^hget\(…:claims\) 1\.00, /);
  } finally {
    census.close();
    client.disconnect();
    await redis.close();
  }
});
