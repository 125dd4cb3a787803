/**
 * The fleet page's screen proxy (GET /devices/:worker/:serial/screen) fetches the screen URL of a device's
 * heartbeat. An upstream error answer is reported by status only: its body is not passed on to API readers.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { silentLogger } from "@farm/log";
import { createRedisClient, publishDeviceBeats } from "@farm/queue";
import { loadSchedulerConfig } from "../src/config.ts";
import { runScheduler, type RunningScheduler } from "../src/main.ts";
import { TASKS_DIR, uniquePrefix } from "./helpers.ts";

const SECRET = "upstream-secret-51c2";
let redis: LocalRedis;
let running: RunningScheduler;
let upstream: Server;
let prefix: string;

before(async () => {
  redis = await startRedis();
  prefix = uniquePrefix();
  running = await runScheduler(loadSchedulerConfig({ redisUrl: redis.url, prefix, port: 0, tasks: [TASKS_DIR], tickMs: 200 }, {}), { log: silentLogger });
  upstream = createServer((_req, res) => {
    res.writeHead(500, { "content-type": "text/plain" });
    res.end(`screen failed: ${SECRET}`);
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
});

after(async () => {
  upstream?.closeAllConnections();
  await new Promise((r) => upstream?.close(r));
  await running?.close();
  await redis?.close();
});

test("an upstream screen error is answered 502 with its status, without its body", async () => {
  const port = (upstream.address() as AddressInfo).port;
  const serial = "emulator-5554";
  const r = createRedisClient(redis.url);
  try {
    const beat = { v: 1, serial, worker: "w1", host: "h", transport: "adb", state: "ready", stepsPerSec: 0, relaunches: 0, episodesDone: 0, screenUrl: `http://127.0.0.1:${port}/devices/${serial}/screen`, at: Date.now() } as const;
    await publishDeviceBeats(r, prefix, [beat], 60_000);
  } finally {
    r.disconnect();
  }
  const res = await fetch(`${running.http.url}/devices/w1/${serial}/screen`);
  const body = await res.text();
  assert.equal(res.status, 502, body);
  assert.match(body, /SCREEN_FAILED/);
  assert.match(body, /HTTP 500/);
  assert.ok(!body.includes(SECRET), `the upstream body is not passed on: ${body}`);
});
