/**
 * Retries go first: with the scheduler's windowed enqueuing (a whole window of the campaign's episodes
 * queued), an episode whose attempt fails with device trouble is retried before the campaign's later
 * episodes — measured as its position in the processing order, with and without prioritizeRetry.
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
  await redis.stop();
});

/** Runs a 40-episode campaign (window 12) on one slow device; episode 0's first attempt fails. Returns the processing order. */
async function processingOrder(raise: boolean): Promise<string[]> {
  const prefix = uniquePrefix();
  const scheduler = await Scheduler.create({ redisUrl: redis.url, prefix, tasks: catalog, windowSize: 12, tickMs: 200 });
  await scheduler.start();
  const order: string[] = [];
  const worker = fakeWorker(
    redis.url,
    prefix,
    async (job) => {
      const index = parseEpisodeJobId(job.id!)!.episodeIndex;
      order.push(job.attemptsMade > 0 ? `${index}r` : String(index));
      await new Promise((r) => setTimeout(r, 120));
      if (index === 0 && job.attemptsMade === 0) {
        if (raise) await prioritizeRetry(job);
        throw new Error("[DEVICE_TROUBLE] device went away");
      }
      return resultFor(job);
    },
    1,
  );
  try {
    await scheduler.submit({ id: "c", taskId: "classic_2048", episodes: 40, policy: "random" });
    await waitFor("the campaign to finish", async () => (await scheduler.status("c")).state !== "running", 60_000);
    return order;
  } finally {
    await worker.close();
    await scheduler.close();
  }
}

test("a retried episode is taken before the campaign's new episodes (and was not without the retry priority)", async (t) => {
  const raised = await processingOrder(true);
  const plain = await processingOrder(false);
  const pos = (o: string[]) => o.indexOf("0r");
  // Backoff is 2 s (defaultEpisodeJobOptions) and each episode takes ≥ 120 ms, so the retry is due after
  // about 16 episodes started, with a window of 12 new episodes queued. Raised, it is the next job taken
  // once due; plain, it waits behind the queued window (FIFO within one priority).
  t.diagnostic(`retry of episode 0 taken as job #${pos(raised) + 1} of ${raised.length} with the retry priority, #${pos(plain) + 1} without`);
  assert.ok(pos(raised) > 0 && pos(plain) > 0, `the retry ran in both: ${raised.join(" ")} | ${plain.join(" ")}`);
  assert.ok(pos(raised) + 5 <= pos(plain), `retry taken at position ${pos(raised)} with the retry priority, ${pos(plain)} without: ${raised.join(" ")} | ${plain.join(" ")}`);
  assert.ok(pos(raised) < raised.length - 5, `new episodes were still waiting when the retry ran: ${raised.join(" ")}`);
});
