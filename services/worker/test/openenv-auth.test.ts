/**
 * The OpenEnv server bound with a token: a WebSocket upgrade without `Authorization: Bearer <token>`, or with another
 * token, is refused with 401 before any device is leased; with it the session opens (here no device is idle, so it is
 * answered CAPACITY_REACHED and closed 1013). /health needs no token.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import WebSocket from "ws";
import { createLogger } from "@farm/log";
import { createFarmMetrics } from "@farm/metrics";
import { TaskCatalog } from "@farm/task";
import type { CommitDeps } from "../src/commit-flow.ts";
import { OpenEnvServer } from "../src/openenv/index.ts";

const TOKEN = "a-long-enough-token-1234";
let server: OpenEnvServer;
let leases = 0;

before(async () => {
  const logger = createLogger({ service: "t", level: "silent" });
  server = await OpenEnvServer.start({
    host: "127.0.0.1",
    port: 0,
    token: TOKEN,
    idleTimeoutMs: 60_000,
    maxSessions: 4,
    version: "test",
    logger,
    session: {
      pool: {
        lease: () => {
          leases++;
          return undefined;
        },
      },
      catalog: TaskCatalog.of([]),
      commit: { workerName: "w1" } as CommitDeps,
      metrics: createFarmMetrics({ service: "t", collectDefault: false }),
      logger,
      frameEvery: 0,
      taskServerAllowedHosts: [],
    },
  });
});

after(() => server?.close());

function connect(headers: Record<string, string>): Promise<{ status?: number; first?: { type: string; data: Record<string, unknown> }; code?: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/ws`, { headers });
    let first: { type: string; data: Record<string, unknown> } | undefined;
    ws.on("unexpected-response", (_req, res) => {
      resolve({ status: res.statusCode! });
      res.resume();
      ws.terminate();
    });
    ws.on("message", (d) => (first ??= JSON.parse(String(d)) as { type: string; data: Record<string, unknown> }));
    ws.on("close", (code) => resolve({ ...(first ? { first } : {}), code }));
    ws.on("error", () => undefined);
  });
}

test("a token-bound OpenEnv server: 401 without or with a wrong token, no device leased; the right token opens a session", async () => {
  assert.deepEqual(await (await fetch(`${server.url}/health`)).json(), { status: "healthy" });
  assert.equal((await connect({})).status, 401);
  assert.equal((await connect({ authorization: "Bearer wrong-token-wrong-token" })).status, 401);
  assert.equal(leases, 0, "refused before any lease");
  const ok = await connect({ authorization: `Bearer ${TOKEN}` });
  assert.equal(leases, 1);
  assert.equal(ok.first?.type, "error");
  assert.equal(ok.first?.data.code, "CAPACITY_REACHED");
  assert.equal(ok.code, 1013);
});
