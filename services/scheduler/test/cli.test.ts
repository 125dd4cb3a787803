/** The campaign commands of `farm` against a private Redis and an in-process scheduler service. */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { silentLogger } from "@farm/log";
import type { Worker } from "bullmq";
import { loadSchedulerConfig } from "../src/config.ts";
import { runScheduler, type RunningScheduler } from "../src/main.ts";
import { fakeWorker, resultFor, uniquePrefix } from "./helpers.ts";

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, "../../..");
const FARM = path.join(REPO, "services/cli/bin/farm.js");
const TOKEN = "cli-test-token-0123456789";
let redis: LocalRedis;
let service: RunningScheduler;
let worker: Worker;
let env: NodeJS.ProcessEnv;

before(async () => {
  redis = await startRedis();
  const prefix = uniquePrefix();
  service = await runScheduler(loadSchedulerConfig({ redisUrl: redis.url, prefix, port: 0, token: TOKEN, tickMs: 100, tasks: [path.join(REPO, "tasks")] }, {}), { log: silentLogger });
  worker = fakeWorker(redis.url, prefix, async (job) => {
    await new Promise((r) => setTimeout(r, 20));
    return resultFor(job, { reward: 3 });
  }, 4);
  env = { ...process.env, REDIS_URL: redis.url, FARM_QUEUE_PREFIX: prefix, FARM_LOG_LEVEL: "silent", FARM_API_URL: "", FARM_API_TOKEN: "" };
});
after(async () => {
  await worker.close();
  await service.close();
  await redis.close();
});

// From the checkout: the task paths below are relative to it (the tests pass from any folder).
const farm = (...args: string[]) => run(process.execPath, [FARM, ...args], { cwd: REPO, env, timeout: 120_000 });

test("farm submit (task file, Redis directly) prints the id; re-submit prints the same; watch prints the summary; status lists it", async () => {
  const a = await farm("submit", "tasks/classic_2048.textproto", "--episodes", "12", "--seed", "5");
  const id = a.stdout.trim();
  assert.match(id, /^c[0-9a-f]{16}$/);
  // The re-submit adds nothing: it runs beside the watch.
  const [b, w] = await Promise.all([farm("submit", "tasks/classic_2048.textproto", "--episodes", "12", "--seed", "5"), farm("watch", id, "--interval-ms", "100")]);
  assert.equal(b.stdout.trim(), id);
  assert.match(b.stderr, /exists already; nothing added/);
  const summary = JSON.parse(w.stdout) as { state: string; completed: number; meanReward: number };
  assert.equal(summary.state, "completed");
  assert.equal(summary.completed, 12);
  assert.equal(summary.meanReward, 3);
  assert.match(w.stderr, /12\/12 100\.0% .* ep\/s ETA - .*completed/);
  const [list, oneOut] = await Promise.all([farm("status"), farm("status", id, "--json")]);
  assert.match(list.stdout, new RegExp(`^${id}\\tcompleted\\tclassic_2048\\t12/12`, "m"));
  const one = JSON.parse(oneOut.stdout) as { enqueued: number };
  assert.equal(one.enqueued, 12);
});

test("farm submit/cancel over --api with the token; unknown task fails with the reason", async () => {
  const api = ["--api", service.http.url, "--token", TOKEN];
  await worker.pause();
  try {
    const id = (await farm("submit", "classic_2048", "--episodes", "50", "--id", "api-cancel", ...api)).stdout.trim();
    assert.equal(id, "api-cancel");
    // The refusals change nothing: side by side with the cancel.
    const [c] = await Promise.all([
      farm("cancel", id, ...api),
      assert.rejects(farm("cancel", id, "--api", service.http.url), /every request needs it: send Authorization: Bearer/),
      assert.rejects(farm("submit", "no_such_task", "--episodes", "1"), (e: { stderr: string }) => /unknown task 'no_such_task'/.test(e.stderr)),
    ]);
    assert.match(c.stdout, /^api-cancel: cancelled/);
  } finally {
    worker.resume();
  }
});
