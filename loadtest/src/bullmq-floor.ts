/**
 * The floor under the farm's dispatch figure: BullMQ alone on the same Redis, with no episode behind a job.
 * `jobs` jobs are added at once (in the scheduler's batches, with an episode job's options and priority) and
 * fetched by `workers` Workers in this process whose processor only waits — BullMQ's own (one round trip per
 * job) or the farm's BurstFetchWorker; a job's start is its processedOn minus its timestamp, as for episodes.
 */
import { Queue, Worker, type Job, type WorkerOptions } from "bullmq";
import { bullConnection, bullPriority, BurstFetchWorker, DEFAULT_CAMPAIGN_PRIORITY, defaultEpisodeJobOptions } from "@farm/queue";
import { quantile } from "./stats.ts";

export interface FloorFigures {
  p50Ms: number;
  p99Ms: number;
  /** From the first add until the last job started. */
  allStartedMs: number;
}

export async function measureBullmqFloor(o: { redisUrl: string; prefix: string; jobs: number; workers: number; batch: number; burst: boolean }): Promise<FloorFigures> {
  const name = o.burst ? "burst-floor" : "bullmq-floor";
  const queueConn = bullConnection(o.redisUrl, "command");
  const workerConns = Array.from({ length: o.workers }, () => bullConnection(o.redisUrl, "blocking"));
  const queue = new Queue(name, { connection: queueConn.connection, prefix: o.prefix });
  const starts: number[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let allStarted!: () => void;
  const done = new Promise<void>((r) => (allStarted = r));
  const hold = async (job: Job) => {
    starts.push(job.processedOn! - job.timestamp);
    if (starts.length === o.jobs) allStarted();
    await held;
  };
  const workers = workerConns.map((c) => {
    const opts: WorkerOptions = { connection: c.connection, prefix: o.prefix, concurrency: Math.ceil(o.jobs / o.workers) };
    return o.burst ? new BurstFetchWorker(name, hold, opts) : new Worker(name, hold, opts);
  });
  try {
    await Promise.all(workers.map((w) => w.waitUntilReady()));
    const t0 = performance.now();
    for (let first = 0; first < o.jobs; first += o.batch) {
      const n = Math.min(o.batch, o.jobs - first);
      await queue.addBulk(Array.from({ length: n }, (_, k) => ({ name: "floor", data: { i: first + k }, opts: { ...defaultEpisodeJobOptions, priority: bullPriority(DEFAULT_CAMPAIGN_PRIORITY), jobId: `floor-${first + k}` } })));
    }
    await done;
    const allStartedMs = performance.now() - t0;
    starts.sort((a, b) => a - b);
    return { p50Ms: quantile(starts, 0.5), p99Ms: quantile(starts, 0.99), allStartedMs };
  } finally {
    release();
    await Promise.all(workers.map((w) => w.close()));
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await Promise.all([queueConn, ...workerConns].map((c) => c.close()));
  }
}
