/**
 * Token mode on a loopback bind (real Redis, the real scheduler): every API route, the fleet page and
 * the queue UI with its API refuse requests without credentials; a browser is sent to /login; a
 * logged-in session (cookie) retries a failed job through the queue UI's own API route, and the job
 * runs again and is counted. Jobs carry readable names `<task>#<index>`.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { UnrecoverableError, type Job } from "bullmq";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { silentLogger } from "@farm/log";
import { loadSchedulerConfig } from "../src/config.ts";
import { SCHEDULER_ROUTES } from "../src/http.ts";
import { runScheduler, type RunningScheduler } from "../src/main.ts";
import { HttpCampaignClient } from "../src/campaign-client.ts";
import { fakeWorker, resultFor, uniquePrefix, waitFor, TASKS_DIR } from "./helpers.ts";

const TOKEN = "secured-ui-token-0123456789";
const OPEN = new Set(["/healthz", "/login", "/metrics", "/favicon.ico"]);
let redis: LocalRedis;
let running: RunningScheduler;
let prefix: string;

before(async () => {
  redis = await startRedis();
  prefix = uniquePrefix();
  running = await runScheduler(loadSchedulerConfig({ redisUrl: redis.url, prefix, port: 0, token: TOKEN, tasks: [TASKS_DIR], tickMs: 200 }, {}), { log: silentLogger });
});
after(async () => {
  await running?.close();
  await redis?.close();
});

const url = (p: string) => `${running.http.url}${p}`;
const concrete = (route: string) => route.replace(":id", "c1").replace(":worker", "w1").replace(":serial", "emulator-5554");

/** bull-board's page and API routes (@bull-board/api routes.js), one request each. */
const QUEUE_UI_ROUTES: [string, string][] = [
  ["GET", "/ui"],
  ["GET", "/ui/static/js/main.js"],
  ["GET", "/ui/api/queues"],
  ["GET", "/ui/api/redis/stats"],
  ["GET", "/ui/api/queues/episodes/c1-0"],
  ["GET", "/ui/api/queues/episodes/c1-0/logs"],
  ["POST", "/ui/api/queues/episodes/add"],
  ["PUT", "/ui/api/queues/episodes/retry/failed"],
  ["PUT", "/ui/api/queues/episodes/c1-0/retry"],
  ["PUT", "/ui/api/queues/episodes/c1-0/clean"],
  ["PUT", "/ui/api/queues/episodes/c1-0/promote"],
  ["PUT", "/ui/api/queues/episodes/clean/completed"],
  ["PUT", "/ui/api/queues/episodes/pause"],
  ["PUT", "/ui/api/queues/episodes/resume"],
  ["PUT", "/ui/api/queues/episodes/empty"],
  ["PUT", "/ui/api/queues/episodes/obliterate"],
];

test("token mode: every route but /healthz, /login and /metrics refuses requests without credentials", async () => {
  const cases: [string, string][] = [...QUEUE_UI_ROUTES, ["GET", "/nope"]];
  for (const [route, allow] of SCHEDULER_ROUTES) {
    for (const method of allow.split(", ")) cases.push([method, concrete(route)]);
  }
  assert.ok(cases.some(([, p]) => p === "/") && cases.some(([, p]) => p === "/devices"), "the fleet page's routes are in the list");
  let refused = 0;
  for (const [method, path] of cases) {
    const r = await fetch(url(path), { method, redirect: "manual", ...(method === "POST" || method === "PUT" ? { headers: { "content-type": "application/json" }, body: "{}" } : {}) });
    if (OPEN.has(path)) {
      // Open without credentials (a POST /login without the right token answers the form again, 401).
      if (method !== "POST") assert.ok(r.status < 400, `${method} ${path} stays open: ${r.status}`);
      continue;
    }
    assert.equal(r.status, 401, `${method} ${path} without credentials: ${r.status}`);
    refused++;
    // Wrong credentials of every kind are refused too.
    for (const authorization of [`Bearer ${TOKEN}x`, `Basic ${Buffer.from(`u:${TOKEN}x`).toString("base64")}`]) {
      assert.equal((await fetch(url(path), { method, redirect: "manual", headers: { authorization } })).status, 401, `${method} ${path} with ${authorization.split(" ")[0]}`);
    }
  }
  assert.ok(refused >= 25, `${refused} routes checked`);
  // A browser asking for a page is sent to the login form, and comes back to the page after it.
  const page = await fetch(url("/"), { redirect: "manual", headers: { accept: "text/html" } });
  assert.equal(page.status, 303);
  assert.equal(page.headers.get("location"), "/login?next=%2F");
  // The right credentials (bearer, or basic auth with the token as password) open the API.
  assert.equal((await fetch(url("/devices"), { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
  assert.equal((await fetch(url("/campaigns"), { headers: { authorization: `Basic ${Buffer.from(`ops:${TOKEN}`).toString("base64")}` } })).status, 200);
});

test("a logged-in session retries a failed job from the queue UI; the job is named <task>#<index> and counted once", async () => {
  const client = new HttpCampaignClient(running.http.url, TOKEN);
  const { campaign } = await client.submit({ taskId: "classic_2048", episodes: 2, id: "retry-me", policy: "random" });
  const attempts = new Map<string, number>();
  const names = new Set<string>();
  // Episode 1 fails for good the first time it runs, then works.
  const worker = fakeWorker(redis.url, prefix, (job: Job) => {
    names.add(job.name);
    const n = (attempts.get(String(job.id)) ?? 0) + 1;
    attempts.set(String(job.id), n);
    if (job.id === "retry-me-1" && n === 1) throw new UnrecoverableError("[DEVICE_UNUSABLE] the test says so");
    return resultFor(job);
  });
  try {
    await waitFor("episode 1 failed", async () => (await client.status(campaign.id)).failed === 1, 30_000);
    assert.deepEqual([...names].sort(), ["classic_2048#0", "classic_2048#1"]);

    const login = await fetch(url("/login"), {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `token=${encodeURIComponent(TOKEN)}&next=${encodeURIComponent("/ui")}`,
    });
    assert.equal(login.status, 303);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
    assert.match(cookie, /^farm_session=/);
    const origin = running.http.url;
    const retryRoute = url("/ui/api/queues/episodes/retry-me-1/retry");
    assert.equal((await fetch(retryRoute, { method: "PUT", headers: { origin } })).status, 401, "no cookie, no retry");
    // What the queue UI's "Retry" button sends, with the session cookie.
    const failedList = await fetch(url("/ui/api/queues?activeQueue=episodes&status=failed&page=1&jobsPerPage=10"), { headers: { cookie } });
    assert.equal(failedList.status, 200);
    assert.match(await failedList.text(), /classic_2048#1/, "the UI lists the failed job by its readable name");
    const retried = await fetch(retryRoute, { method: "PUT", headers: { cookie, origin } });
    assert.ok(retried.status < 300, `retry through the UI's route: ${retried.status} ${await retried.text()}`);
    await waitFor("the retried job completed", async () => attempts.get("retry-me-1") === 2 && (await running.scheduler.queue.getJobState("retry-me-1")) === "completed", 30_000);
    assert.equal(attempts.get("retry-me-0"), 1);
  } finally {
    await worker.close();
  }
});
