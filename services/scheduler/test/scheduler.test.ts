import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { JobRejectedError, episodeJobId } from "@farm/queue";
import { Scheduler } from "../src/scheduler.ts";
import { folderTaskCatalog } from "../src/task-catalog.ts";
import { SchedulerError } from "../src/errors.ts";
import { TASK_HASH, catalog, fakeWorker, resultFor, uniquePrefix, waitFor, TASKS_DIR } from "./helpers.ts";

let redis: LocalRedis;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis.close();
});

async function totalJobs(s: Scheduler): Promise<number> {
  return Object.values(await s.queue.getJobCounts()).reduce((a, b) => a + b, 0);
}

test("submit 40 episodes → 40 jobs with deterministic ids; re-submitting adds none", async () => {
  const s = await Scheduler.create({ redisUrl: redis.url, prefix: uniquePrefix(), tasks: catalog });
  try {
    const spec = { taskId: "classic_2048", episodes: 40, policy: "random", baseSeed: 7 };
    const first = await s.submit(spec);
    assert.equal(first.created, true);
    assert.match(first.campaign.id, /^c[0-9a-f]{16}$/);
    assert.equal(first.campaign.enqueued, 40);
    assert.equal(await totalJobs(s), 40);
    const job = await s.queue.getJob(episodeJobId(first.campaign.id, 39));
    assert.equal(job?.data.seed, 46);
    assert.equal(job?.data.taskHash, TASK_HASH);
    const again = await s.submit({ ...spec, taskHash: TASK_HASH });
    assert.equal(again.created, false);
    assert.equal(again.campaign.id, first.campaign.id);
    assert.equal(await totalJobs(s), 40);
    // Same id, different work: refused rather than silently merged.
    await assert.rejects(s.submit({ ...spec, id: first.campaign.id, episodes: 41 }), (e: unknown) => e instanceof SchedulerError && e.code === "CAMPAIGN_CONFLICT");
  } finally {
    await s.close();
  }
});

test("unknown task id and hash mismatch are refused at submit with a clear message", async () => {
  const s = await Scheduler.create({ redisUrl: redis.url, prefix: uniquePrefix(), tasks: catalog });
  try {
    await assert.rejects(s.submit({ taskId: "no_such_task", episodes: 1 }), (e: unknown) => {
      assert.ok(e instanceof SchedulerError);
      assert.equal(e.code, "TASK_UNKNOWN");
      assert.match(e.message, /unknown task 'no_such_task'.*known: classic_2048/);
      return true;
    });
    await assert.rejects(s.submit({ taskId: "classic_2048", taskHash: "cd".repeat(32), episodes: 1 }), (e: unknown) => {
      assert.ok(e instanceof SchedulerError);
      assert.equal(e.code, "TASK_HASH_MISMATCH");
      assert.match(e.message, /hash mismatch: submitted cdcdcdcdcdcd…, the scheduler's task folder has abababababab…/);
      return true;
    });
    await assert.rejects(s.submit({ taskId: "classic_2048", episodes: 0, policy: "sh -c reboot" }), /invalid campaign: policy: .*; episodes/);
    assert.equal(await totalJobs(s), 0);
  } finally {
    await s.close();
  }
});

test("the real task folder: tasks/ resolves classic_2048 by id and hash", async () => {
  const tasks = folderTaskCatalog([TASKS_DIR]);
  const t = tasks.get("classic_2048");
  assert.ok(t, `tasks/ should hold classic_2048; has ${tasks.ids().join(", ")}`);
  assert.match(t.hash, /^[0-9a-f]{64}$/);
});

test("window: a 1,000,000-episode campaign never has more than the window in Redis; cancel removes waiting jobs and stops top-up", async () => {
  const prefix = uniquePrefix();
  const window = 50;
  const s = await Scheduler.create({ redisUrl: redis.url, prefix, tasks: catalog, windowSize: window, tickMs: 200 });
  await s.start();
  let processed = 0;
  const worker = fakeWorker(redis.url, prefix, async (job) => {
    processed++;
    await new Promise((r) => setTimeout(r, 2));
    return resultFor(job);
  });
  let maxPending = 0;
  const sample = async () => {
    const c = await s.queue.getJobCounts("waiting", "prioritized", "delayed", "active");
    maxPending = Math.max(maxPending, (c.waiting ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0) + (c.active ?? 0));
  };
  try {
    const { campaign } = await s.submit({ taskId: "classic_2048", episodes: 1_000_000 });
    assert.equal(campaign.enqueued, window);
    await waitFor("300 episodes counted", async () => {
      await sample();
      return (await s.status(campaign.id)).completed >= 300;
    });
    assert.ok(maxPending <= window, `pending jobs peaked at ${maxPending} > window ${window}`);
    const st = await s.status(campaign.id);
    assert.ok(st.enqueued <= st.completed + window, `enqueued ${st.enqueued} vs completed ${st.completed}`);
    assert.ok(st.episodesPerSec > 0 && st.etaSec !== null && st.etaSec > 0);

    await worker.pause(); // let the queue hold waiting jobs, then cancel
    await waitFor("waiting jobs", async () => ((await s.queue.getJobCounts("prioritized")).prioritized ?? 0) > 0);
    const cancelled = await s.cancel(campaign.id);
    assert.equal(cancelled.state, "cancelled");
    const c = await s.queue.getJobCounts("waiting", "prioritized", "delayed");
    assert.equal((c.waiting ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0), 0, "no queued jobs after cancel");
    await waitFor("cancelled campaign finishes", async () => (await s.status(campaign.id)).finishedAt !== undefined);
    const final = await s.status(campaign.id);
    const enqueuedAtCancel = final.enqueued;
    await s.tick();
    assert.equal((await s.status(campaign.id)).enqueued, enqueuedAtCancel, "no top-up after cancel");
    assert.equal(final.summary?.state, "cancelled");
    assert.equal(final.summary?.notRun, 1_000_000 - final.finished);
    assert.ok(processed >= 300);
  } finally {
    await worker.close();
    await s.close();
  }
});

test("progress and summary after all complete: outcomes, causes, failures by code, mean reward", async () => {
  const prefix = uniquePrefix();
  const s = await Scheduler.create({ redisUrl: redis.url, prefix, tasks: catalog, windowSize: 10, tickMs: 200 });
  await s.start();
  const worker = fakeWorker(redis.url, prefix, (job) => {
    const i = job.data.episodeIndex as number;
    if (i % 10 === 9) throw new JobRejectedError("TASK_HASH_MISMATCH", `job ${job.id}: test`);
    return i % 2 === 0 ? resultFor(job, { reward: 2, steps: 4 }) : resultFor(job, { outcome: "truncated", cause: "step_limit", reward: 0, steps: 8 });
  });
  try {
    const { campaign } = await s.submit({ taskId: "classic_2048", episodes: 40, id: "summary-test" });
    await waitFor("campaign finishes", async () => (await s.status(campaign.id)).state !== "running");
    const st = await s.status(campaign.id);
    assert.equal(st.state, "completed");
    assert.equal(st.completed, 36);
    assert.equal(st.failed, 4);
    assert.equal(st.enqueued, 40);
    const sum = st.summary;
    assert.ok(sum);
    assert.deepEqual(sum.byOutcome, { terminated: 20, truncated: 16 });
    assert.deepEqual(sum.byCause, { episode_end: 20, step_limit: 16 });
    assert.deepEqual(sum.failuresByCode, { TASK_HASH_MISMATCH: 4 });
    assert.equal(sum.meanReward, 40 / 36);
    assert.equal(sum.totalSteps, 20 * 4 + 16 * 8);
    assert.equal(sum.notRun, 0);
    assert.equal((await s.list()).find((c) => c.id === "summary-test")?.state, "completed");
  } finally {
    await worker.close();
    await s.close();
  }
});

test("events missed while no scheduler ran are counted by reconcile; each episode once", async () => {
  const prefix = uniquePrefix();
  const client = await Scheduler.create({ redisUrl: redis.url, prefix, tasks: catalog });
  const { campaign } = await client.submit({ taskId: "classic_2048", episodes: 20, id: "offline" });
  const worker = fakeWorker(redis.url, prefix, (job) => resultFor(job));
  await waitFor("jobs done", async () => (await client.queue.getJobCounts("completed")).completed === 20);
  await worker.close();
  assert.equal((await client.status(campaign.id)).completed, 0, "nothing counted without a started scheduler");
  const a = await Scheduler.create({ redisUrl: redis.url, prefix, tasks: catalog });
  const b = await Scheduler.create({ redisUrl: redis.url, prefix, tasks: catalog });
  try {
    await Promise.all([a.start(), b.start()]); // two schedulers reconciling the same campaign
    await waitFor("finished", async () => (await client.status(campaign.id)).state === "completed");
    const st = await client.status(campaign.id);
    assert.equal(st.completed, 20);
    assert.equal(st.summary?.completed, 20);
  } finally {
    await Promise.all([a.close(), b.close(), client.close()]);
  }
});

test("an unreachable Redis fails create() with REDIS_UNAVAILABLE; a malformed campaign id is 'not found'", async () => {
  const { freePort } = await import("@farm/local-services");
  const port = await freePort();
  await assert.rejects(
    Scheduler.create({ redisUrl: `redis://u:secretpw@127.0.0.1:${port}`, tasks: catalog, connectTimeoutMs: 500 }),
    (e: unknown) => e instanceof SchedulerError && e.code === "REDIS_UNAVAILABLE" && /cannot reach Redis at redis:\/\/u:\*\*\*@127\.0\.0\.1/.test(e.message),
  );
  const s = await Scheduler.create({ redisUrl: redis.url, prefix: uniquePrefix(), tasks: catalog });
  try {
    await assert.rejects(s.status("bad:id"), (e: unknown) => e instanceof SchedulerError && e.code === "CAMPAIGN_NOT_FOUND");
    await assert.rejects(s.cancel("nope"), (e: unknown) => e instanceof SchedulerError && e.code === "CAMPAIGN_NOT_FOUND");
  } finally {
    await s.close();
  }
});
