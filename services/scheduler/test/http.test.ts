import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { silentLogger } from "@farm/log";
import { loadSchedulerConfig } from "../src/config.ts";
import { runScheduler, type RunningScheduler } from "../src/main.ts";
import { HttpCampaignClient } from "../src/campaign-client.ts";
import { SchedulerError } from "../src/errors.ts";
import { fakeWorker, resultFor, uniquePrefix, waitFor, TASKS_DIR } from "./helpers.ts";

const TOKEN = "test-token-0123456789";
let redis: LocalRedis;
let running: RunningScheduler;
let prefix: string;

before(async () => {
  redis = await startRedis();
  prefix = uniquePrefix();
  // The real composition root, on the repository's task folder.
  const config = loadSchedulerConfig({ redisUrl: redis.url, prefix, port: 0, token: TOKEN, tasks: [TASKS_DIR], tickMs: 200 }, {});
  running = await runScheduler(config, { log: silentLogger });
});
after(async () => {
  await running.close();
  await running.close(); // idempotent
  await redis.close();
});

const post = (path: string, body?: unknown, token?: string) =>
  fetch(running.http.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

test("config: validated once, with clear messages", () => {
  assert.throws(() => loadSchedulerConfig({ port: 6379 }, {}), /port \(FARM_SCHEDULER_PORT\) is taken by adb, Redis or emulators/);
  assert.throws(() => loadSchedulerConfig({}, { REDIS_URL: "http://x" }), /redisUrl \(REDIS_URL\) invalid Redis URL 'http:\/\/x'/);
  assert.deepEqual(loadSchedulerConfig({}, { FARM_TASKS: "a, b" }).taskPaths, ["a", "b"]);
});

test("POST needs the token; a 40-episode campaign runs to a summary; /metrics counters match; /ui answers", async () => {
  const spec = { taskId: "classic_2048", episodes: 40, policy: "random", baseSeed: 1 };
  let r = await post("/campaigns", spec);
  assert.equal(r.status, 401);
  assert.equal(((await r.json()) as { error: { code: string } }).error.code, "UNAUTHORIZED");
  assert.equal((await post("/campaigns", spec, "wrong-token-xxxxxxxx")).status, 401);

  r = await post("/campaigns", spec, TOKEN);
  assert.equal(r.status, 201);
  const { campaign } = (await r.json()) as { campaign: { id: string; enqueued: number } };
  assert.equal(campaign.enqueued, 40);
  r = await post("/campaigns", spec, TOKEN);
  assert.equal(r.status, 200, "re-submission is a no-op");
  assert.equal(((await r.json()) as { created: boolean }).created, false);

  const seen = new Set<string>();
  const worker = fakeWorker(redis.url, prefix, (job) => {
    seen.add(String(job.id));
    return resultFor(job, { reward: 0.5 });
  }, 4);
  try {
    const client = new HttpCampaignClient(running.http.url, TOKEN);
    await waitFor("campaign completes", async () => (await client.status(campaign.id)).state === "completed");
    const st = await client.status(campaign.id);
    assert.equal(seen.size, 40, "exactly 40 distinct episodes ran");
    assert.equal(st.completed, 40);
    assert.equal(st.summary?.meanReward, 0.5);
    assert.equal((await client.list()).length, 1);

    const metrics = await (await fetch(`${running.http.url}/metrics`)).text();
    assert.match(metrics, /^farm_campaigns_submitted_total\{service="scheduler"\} 1$/m);
    assert.match(metrics, /^farm_jobs_enqueued_total\{task="classic_2048",service="scheduler"\} 40$/m);
    assert.match(metrics, /^farm_queue_jobs\{queue="episodes",state="completed",service="scheduler"\} 40$/m);

    assert.equal((await fetch(`${running.http.url}/ui`)).status, 401, "token mode: the queue UI needs the token even on loopback");
    const ui = await fetch(`${running.http.url}/ui`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(ui.status, 200);
    assert.match(await ui.text(), /<html/i);
    assert.equal((await fetch(`${running.http.url}/healthz`)).status, 200);
  } finally {
    await worker.close();
  }
});

test("HTTP errors are JSON with codes: unknown task 422, bad spec 400, unknown campaign 404, cancel needs the token", async () => {
  let r = await post("/campaigns", { taskId: "nope", episodes: 1 }, TOKEN);
  assert.equal(r.status, 422);
  assert.match(((await r.json()) as { error: { message: string } }).error.message, /unknown task 'nope'/);
  r = await post("/campaigns", { taskId: "classic_2048", episodes: -1 }, TOKEN);
  assert.equal(r.status, 400);
  r = await fetch(`${running.http.url}/campaigns`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` }, body: "{not json" });
  assert.equal(r.status, 400);
  assert.equal((await fetch(`${running.http.url}/campaigns/nope`)).status, 401, "token mode: reads need the token too");
  assert.equal((await fetch(`${running.http.url}/campaigns/nope`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 404);
  assert.equal((await post("/campaigns/nope/cancel")).status, 401);
  const client = new HttpCampaignClient(running.http.url, TOKEN);
  await assert.rejects(client.cancel("nope"), (e: unknown) => e instanceof SchedulerError && e.code === "CAMPAIGN_NOT_FOUND");
  const { campaign } = await client.submit({ taskId: "classic_2048", episodes: 5, id: "to-cancel" });
  assert.equal((await client.cancel(campaign.id)).state, "cancelled");
});

test("without a token the API refuses to bind a non-loopback address", async () => {
  const { startSchedulerHttp } = await import("../src/http.ts");
  await assert.rejects(
    startSchedulerHttp({ scheduler: running.scheduler, metrics: running.metrics, port: 0, host: "0.0.0.0" }),
    /without a token/,
  );
});

test("a campaign stored straight into Redis (CLI mode) is picked up and counted by the running service", async () => {
  const { Scheduler } = await import("../src/scheduler.ts");
  const { folderTaskCatalog } = await import("../src/task-catalog.ts");
  const scrape = async (re: RegExp) => Number(re.exec(await (await fetch(`${running.http.url}/metrics`)).text())?.[1] ?? 0);
  const submittedRe = /^farm_campaigns_submitted_total\{service="scheduler"\} (\d+)$/m;
  const before = await scrape(submittedRe);
  const cli = await Scheduler.create({ redisUrl: redis.url, prefix, tasks: folderTaskCatalog([TASKS_DIR]), enqueueOnSubmit: false });
  try {
    const { campaign } = await cli.submit({ taskId: "classic_2048", episodes: 7, id: "from-cli" });
    assert.equal(campaign.enqueued, 0, "the client only stores the campaign");
    await waitFor("service enqueues it", async () => (await cli.status("from-cli")).enqueued === 7);
    // The service counts the campaign once its first jobs are in the queue, a moment after the claim that status reads.
    await waitFor("the service to count it once", async () => (await scrape(submittedRe)) === before + 1);
    await cli.cancel("from-cli");
  } finally {
    await cli.close();
  }
});
