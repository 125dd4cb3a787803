/**
 * A Lua script run by its SHA1 (EVALSHA): neither its text nor Redis's hashing of it travels with every call,
 * as they do with EVAL. A Redis that does not know the script yet (first call, a restart, a failover to a
 * replica, another Cluster node) answers NOSCRIPT; the call is then made once with EVAL, which also loads the
 * script for the next ones.
 */
import { createHash } from "node:crypto";
import type { RedisClient } from "./connection.ts";

export class LuaScript {
  readonly sha1: string;

  constructor(readonly source: string) {
    this.sha1 = createHash("sha1").update(source).digest("hex");
  }

  async run(redis: RedisClient, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha1, keys.length, ...keys, ...args);
    } catch (e) {
      if (!(e instanceof Error && e.message.startsWith("NOSCRIPT"))) throw e;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}
