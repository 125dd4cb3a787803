/**
 * No foreign bodies in job data (issue 32): a campaign whose policy URL points at a server that answers 403
 * with a secret body. The worker makes the request from inside the network; what comes back must not travel
 * through Redis to readers of jobs: not the job's failed reason or result, not `farm status`, not the
 * scheduler's API (campaign endpoints, devices), not the queue UI (its page and its API) nor the fleet page.
 * The worker's own log and metrics record it (bounded).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Queue } from "bullmq";
import { createLogger } from "@farm/log";
import { sleep } from "@farm/time";
import { startLocalFarm, type LocalFarm } from "../src/index.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const TASK = path.join(REPO, "tasks/classic_2048.textproto");
const FARM = path.join(REPO, "services/cli/bin/farm.js");
const SECRET = "internal-secret-7f3a9c";
const PREFIX = "{foreign-bodies-test}";
const run = promisify(execFile);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "farm-foreign-"));
/** What the farm logs (the worker's local log), line by line. */
const logged: string[] = [];
let policyServer: Server;
let policyUrl: string;
let farm: LocalFarm;
let hits = 0;

before(async () => {
  policyServer = createServer((req, res) => {
    hits++;
    req.resume();
    res.writeHead(403, { "content-type": "text/plain" });
    res.end(`forbidden: ${SECRET} (an internal service's answer)\n`);
  });
  await new Promise<void>((r) => policyServer.listen(0, "127.0.0.1", r));
  const port = (policyServer.address() as AddressInfo).port;
  // A query value (the submitter's own, in the job's data) is not repeated in failure messages either.
  // (A URL with user:password@ is refused at submit: the job data is readable by every queue reader.)
  policyUrl = `http://127.0.0.1:${port}/act?key=qv-4242&plain=1`;
  const logger = createLogger({ service: "foreign-bodies-test", level: "warn", destination: { write: (line: string) => void logged.push(line) } });
  farm = await startLocalFarm({
    devices: 1,
    taskPaths: [TASK],
    outDir: path.join(tmp, "out"),
    queuePrefix: PREFIX,
    logger,
    environment: {},
    worker: { episode: { settleMs: 0 } },
    bindTimeoutMs: 60_000,
    scheduler: { http: true, tickMs: 100 },
  });
});

after(async () => {
  await farm?.close();
  policyServer?.closeAllConnections();
  await new Promise((r) => policyServer?.close(r));
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function text(url: string): Promise<string> {
  const res = await fetch(url);
  return `${res.status} ${await res.text()}`;
}

test("a policy URL answering 403 with a secret body: the secret is in no job, API answer, CLI output or page", async () => {
  const id = "foreign";
  await farm.scheduler.submit({ id, taskId: "classic_2048", policy: `http:${policyUrl}`, episodes: 2, options: { maxEpisodeSteps: 5 } });
  // Each episode fails every one of its attempts (a policy failure is retried); the test does not wait out the
  // retries' backoff (2 s, 4 s, 8 s, 16 s): a retry waiting in "delayed" is moved on to the queue at once.
  const queue = new Queue("episodes", { connection: { url: farm.redisUrl }, prefix: PREFIX });
  let st = await farm.scheduler.status(id);
  for (const deadline = Date.now() + 120_000; st.state === "running" && Date.now() < deadline; st = await farm.scheduler.status(id)) {
    await queue.promoteJobs();
    await sleep(100);
  }
  assert.notEqual(st.state, "running", "the campaign finished");
  assert.ok(hits > 0, "the worker asked the policy URL");

  // Everything a reader of jobs can see, gathered in one text.
  const jobs = await queue.getJobs(["failed", "completed"], 0, 100);
  await queue.close();
  assert.ok(jobs.length >= 2, `jobs: ${jobs.length}`);
  const jobText = JSON.stringify(jobs.map((j) => ({ failedReason: j.failedReason, stacktrace: j.stacktrace, returnvalue: j.returnvalue, data: j.data })));
  const reasons = jobs.map((j) => `${j.failedReason ?? ""} ${JSON.stringify(j.returnvalue ?? "")}`).join("\n");
  assert.match(reasons, /HTTP 403/, "the status is recorded");
  assert.match(reasons, /not shown/, "and that a body was kept out");
  assert.doesNotMatch(reasons, /qv-4242/, "query values are redacted in messages");
  assert.match(reasons, /\/act\?key=\*\*\*&plain=\*\*\*/, "the URL is named, its query values redacted");
  const api = farm.schedulerService!.http.url;
  const env = { ...process.env, REDIS_URL: farm.redisUrl, FARM_QUEUE_PREFIX: PREFIX, FARM_LOG_LEVEL: "silent", FARM_API_URL: "", FARM_API_TOKEN: "" };
  const cli = async (...args: string[]) => {
    const r = await run(process.execPath, [FARM, ...args], { env, timeout: 60_000 }).catch((e: { stdout?: string; stderr?: string }) => e);
    return `${r.stdout ?? ""}${r.stderr ?? ""}`;
  };
  // Read side by side: nothing below writes.
  const reads = {
    "farm status": cli("status"),
    "farm status <id> --json": cli("status", id, "--json"),
    "GET /campaigns": text(`${api}/campaigns`),
    "GET /campaigns/:id": text(`${api}/campaigns/${id}`),
    "GET /devices": text(`${api}/devices`),
    "fleet page /": text(`${api}/`),
    "queue UI /ui": text(`${api}/ui`),
    "queue UI API failed jobs": text(`${api}/ui/api/queues?activeQueue=episodes&status=failed&page=1`),
    "queue UI API completed jobs": text(`${api}/ui/api/queues?activeQueue=episodes&status=completed&page=1`),
  };
  const seen = { jobs: jobText, ...Object.fromEntries(await Promise.all(Object.entries(reads).map(async ([where, t]) => [where, await t] as const))) } as Record<keyof typeof reads | "jobs", string>;
  for (const [where, t] of Object.entries(seen)) {
    assert.ok(t.length > 0, `${where}: read something`);
    assert.ok(!t.includes(SECRET), `${where} must not contain the policy server's body:\n${t.slice(0, 2000)}`);
  }
  assert.match(seen["queue UI API failed jobs"] + seen["queue UI API completed jobs"], /HTTP 403/, "the queue UI shows the jobs and their status");

  // The worker's own log and metrics have it, bounded.
  const metrics = await text(`${farm.worker.metricsUrl}/metrics`);
  const counted = /^farm_policy_foreign_bodies_total\{[^}]*kind="http_status"[^}]*\} (\d+)/m.exec(metrics);
  assert.ok(counted && Number(counted[1]) >= 1, "counted in farm_policy_foreign_bodies_total");
  const lines = logged.filter((l) => l.includes('"policy:foreign-body"'));
  assert.equal(lines.length, 1, "one log line per URL per minute, however many requests");
  assert.ok(lines[0]!.includes(SECRET) && lines[0]!.length < 2000, "the local log line holds a bounded excerpt");
});
