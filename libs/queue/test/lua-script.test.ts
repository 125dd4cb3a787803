/**
 * LuaScript in a real Redis: runs by SHA1 once Redis knows the script (its text is sent once, not per call),
 * loads it again after Redis forgot it (SCRIPT FLUSH: what a restart or a failover looks like), and a script
 * error is the caller's error, not a NOSCRIPT retry.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { LuaScript, type RedisClient } from "../src/index.ts";
import { privateRedis } from "./private-redis.ts";

let redis: RedisClient;
privateRedis((client) => (redis = client));

/** calls of a command since the server started, from INFO commandstats. */
async function calls(command: string): Promise<number> {
  const m = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, "m").exec(await redis.info("commandstats"));
  return m ? Number(m[1]) : 0;
}

test("a script runs by its SHA1 after one EVAL, and again after Redis forgot it", async () => {
  const incr = new LuaScript("return redis.call('INCRBY', KEYS[1], ARGV[1])");
  const [eval0, evalsha0] = [await calls("eval"), await calls("evalsha")];
  assert.equal(await incr.run(redis, ["{t}:n"], [2]), 2);
  for (let i = 0; i < 5; i++) await incr.run(redis, ["{t}:n"], [1]);
  assert.equal(await redis.get("{t}:n"), "7");
  assert.equal((await calls("eval")) - eval0, 1, "the text is sent once");
  assert.equal((await calls("evalsha")) - evalsha0, 6, "every call asks by SHA1 first");

  await redis.script("FLUSH");
  assert.equal(await incr.run(redis, ["{t}:n"], [10]), 17, "a forgotten script is loaded again");
  assert.equal((await calls("eval")) - eval0, 2);
});

test("an error inside the script is the caller's (no second run)", async () => {
  const bad = new LuaScript("redis.call('INCR', KEYS[1]); return redis.call('NOSUCHCOMMAND')");
  await assert.rejects(bad.run(redis, ["{t}:once"], []), (e: Error) => !e.message.startsWith("NOSCRIPT"));
  await assert.rejects(bad.run(redis, ["{t}:once"], []));
  assert.equal(await redis.get("{t}:once"), "2", "each call ran the script once");
});
