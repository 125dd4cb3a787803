/**
 * Redis outages as an operator sees them: the scheduler's API answers 503 (REDIS_UNAVAILABLE) within a
 * few seconds while Redis is down and recovers by itself; one log line when Redis goes, one when it is
 * back (with the outage length); a wrong password makes `farm scheduler` and `farm worker` exit non-zero
 * at start-up with a clear message.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { startRedis } from "@farm/local-services";
import { capturedLogger } from "@farm/log/testing";
import { loadSchedulerConfig } from "../src/config.ts";
import { runScheduler } from "../src/main.ts";
import { uniquePrefix, waitFor } from "./helpers.ts";

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, "../../..");
const FARM = path.join(REPO, "services/cli/bin/farm.js");
const TASK = path.join(REPO, "tasks/classic_2048.textproto");

test("while Redis is down the API answers 503 within seconds, logs one line down and one up, and recovers by itself", async () => {
  const redis = await startRedis();
  const { logger: log, lines } = capturedLogger("scheduler");
  const service = await runScheduler(loadSchedulerConfig({ redisUrl: redis.url, prefix: uniquePrefix(), port: 0, tasks: [TASK], tickMs: 100, reconcileMs: 200 }, {}), { log });
  try {
    const get = async () => {
      const t0 = Date.now();
      const r = await fetch(`${service.http.url}/campaigns`);
      return { status: r.status, body: (await r.json()) as { error?: { code: string; message: string } }, ms: Date.now() - t0 };
    };
    assert.equal((await get()).status, 200);
    redis.kill();
    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < 3; i++) {
      const r = await get();
      assert.equal(r.status, 503, JSON.stringify(r.body));
      assert.equal(r.body.error?.code, "REDIS_UNAVAILABLE");
      assert.match(r.body.error?.message ?? "", /Redis is unreachable/);
      assert.ok(r.ms < 5000, `answered in ${r.ms} ms`);
    }
    await new Promise((r) => setTimeout(r, 2000)); // ioredis retries many times meanwhile
    await redis.restart();
    await waitFor("the API to answer again", async () => (await get()).status === 200, 30_000);
    const downs = lines.filter((l) => l.event === "redis:down");
    const ups = lines.filter((l) => l.event === "redis:up");
    assert.equal(downs.length, 1, `one redis:down line, got ${downs.length}`);
    assert.equal(ups.length, 1, `one redis:up line, got ${ups.length}`);
    assert.ok(Number(ups[0]!.outageMs) >= 2000, `outage length logged: ${String(ups[0]!.outageMs)} ms`);
    assert.equal(lines.filter((l) => /tick-failed|reconcile-failed|redis:error/.test(String(l.event))).length, 0, "no line per retry");
  } finally {
    await service.close();
    await redis.close();
  }
});

test("a wrong Redis password makes farm scheduler and farm worker exit non-zero at start-up with a clear message", async () => {
  const redis = await startRedis({ requirePass: "the-right-password" });
  try {
    const url = `redis://:wrong-password@127.0.0.1:${redis.port}`;
    const env = { ...process.env, FARM_LOG_LEVEL: "silent" };
    for (const args of [
      ["scheduler", "--redis", url, "--port", "0", "--tasks", TASK],
      ["worker", "--redis", url, "--tasks", TASK, "--metrics-port", "0", "--adb-port", "1"],
    ]) {
      const t0 = Date.now();
      const r = await run(process.execPath, [FARM, ...args], { env, timeout: 60_000 }).then(
        () => ({ code: 0, stderr: "" }),
        (e: { code?: number; stderr?: string; killed?: boolean }) => ({ code: e.killed ? "timeout" : e.code, stderr: e.stderr ?? "" }),
      );
      assert.equal(r.code, 1, `farm ${args[0]} exits 1 (got ${String(r.code)} after ${Date.now() - t0} ms): ${r.stderr}`);
      assert.match(r.stderr, /refused the credentials/, `farm ${args[0]}: ${r.stderr}`);
      assert.ok(!r.stderr.includes("wrong-password"), "the password is not echoed");
    }
  } finally {
    await redis.close();
  }
});
