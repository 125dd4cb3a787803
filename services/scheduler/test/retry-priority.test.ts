/**
 * Retries go first: with the scheduler's windowed enqueuing (a whole window of the campaign's episodes
 * queued), an episode whose attempt fails with device trouble is retried before the campaign's later
 * episodes — measured as the jobs taken while the retry was due, with and without prioritizeRetry.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { parseEpisodeJobId, prioritizeRetry } from "@farm/queue";
import { Scheduler } from "../src/index.ts";
import { catalog, fakeWorker, resultFor, uniquePrefix, waitFor } from "./helpers.ts";

let redis: LocalRedis;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis.close();
});

interface Run {
  order: string[];
  /** Jobs taken after the retry of episode 0 was due and before the retry itself. */
  takenWhileDue: number;
}

/** Runs a 40-episode campaign (window 12) on one slow device; episode 0's first attempt fails. */
async function processingOrder(raise: boolean): Promise<Run> {
  const prefix = uniquePrefix();
  const scheduler = await Scheduler.create({ redisUrl: redis.url, prefix, tasks: catalog, windowSize: 12, tickMs: 200 });
  await scheduler.start();
  const started: Array<{ label: string; at: number }> = [];
  let failedAt = 0;
  let dueAt = Infinity;
  const worker = fakeWorker(
    redis.url,
    prefix,
    async (job) => {
      const index = parseEpisodeJobId(job.id!)!.episodeIndex;
      const retry = job.attemptsMade > 0;
      started.push({ label: retry ? `${index}r` : String(index), at: Date.now() });
      await new Promise((r) => setTimeout(r, 120));
      if (index === 0 && !retry) {
        if (raise) await prioritizeRetry(job);
        failedAt = Date.now();
        throw new Error("[DEVICE_TROUBLE] device went away");
      }
      return resultFor(job);
    },
    1,
  );
  // The backoff has jitter, so when the retry fell due is read from the failed attempt's delay, not assumed.
  worker.on("failed", (job) => {
    if (job && parseEpisodeJobId(job.id!)?.episodeIndex === 0) dueAt = failedAt + job.delay;
  });
  try {
    await scheduler.submit({ id: "c", taskId: "classic_2048", episodes: 40, policy: "random" });
    await waitFor("the campaign to finish", async () => (await scheduler.status("c")).state !== "running", 60_000);
    const retryAt = started.findIndex((s) => s.label === "0r");
    const takenWhileDue = started.slice(0, Math.max(retryAt, 0)).filter((s) => s.at >= dueAt).length;
    return { order: started.map((s) => s.label), takenWhileDue };
  } finally {
    await worker.close();
    await scheduler.close();
  }
}

test("a retried episode is taken before the campaign's new episodes (and was not without the retry priority)", async (t) => {
  const raised = await processingOrder(true);
  const plain = await processingOrder(false);
  const orders = `${raised.order.join(" ")} | ${plain.order.join(" ")}`;
  // With a window of 12 new episodes queued, the retry falls due (after its 1-2 s backoff) behind about ten
  // waiting episodes. Raised, it is the next job taken once due; plain, it waits behind them (FIFO within one priority).
  t.diagnostic(`jobs taken while the retry of episode 0 was due: ${raised.takenWhileDue} with the retry priority, ${plain.takenWhileDue} without`);
  assert.ok(raised.order.includes("0r") && plain.order.includes("0r"), `the retry ran in both: ${orders}`);
  assert.ok(raised.takenWhileDue <= 1, `with the retry priority the retry is the next job once due: ${orders}`);
  assert.ok(plain.takenWhileDue >= raised.takenWhileDue + 5, `without it the retry waits behind the queued window: ${orders}`);
  assert.ok(raised.order.indexOf("0r") < raised.order.length - 5, `new episodes were still waiting when the retry ran: ${orders}`);
});
