/** Shared test helpers: a private Redis per test file, a unique prefix per test, a fake worker. */
import path from "node:path";
import { after, before } from "node:test";
import { Worker, type Job } from "bullmq";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { silentLogger } from "@farm/log";
import { QUEUE_NAMES, redisConnection, type EpisodeJobResult } from "@farm/queue";
import { staticTaskCatalog } from "../src/task-catalog.ts";
import { loadSchedulerConfig } from "../src/config.ts";
import { runScheduler, type RunningScheduler } from "../src/main.ts";

/** The checkout's task folder, wherever the tests run from. */
export const TASKS_DIR = path.resolve(import.meta.dirname, "../../../tasks");
export const TASK_HASH = "ab".repeat(32);
export const catalog = staticTaskCatalog([{ task: { id: "classic_2048" }, hash: TASK_HASH }]);

let n = 0;
/** A fresh hash-tagged prefix so tests sharing one Redis never see each other's keys. */
export function uniquePrefix(): string {
  return `{t${process.pid}x${++n}}`;
}

export function resultFor(job: Job, overrides: Partial<EpisodeJobResult> = {}): EpisodeJobResult {
  return { v: 1, outcome: "terminated", cause: "episode_end", steps: 10, reward: 1, worker: "test", device: `dev-${job.id}`, ...overrides };
}

/** A tiny BullMQ worker standing in for services/worker: completes each job with `process(job)`. */
export function fakeWorker(redisUrl: string, prefix: string, process: (job: Job) => Promise<unknown> | unknown, concurrency = 8): Worker {
  return new Worker(QUEUE_NAMES.episodes, async (job) => process(job), {
    connection: redisConnection(redisUrl, "blocking"),
    prefix,
    concurrency,
    drainDelay: 1,
  });
}

export async function waitFor(what: string, cond: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * A private Redis and the scheduler service (HTTP API on a free port, the checkout's tasks) for one test file: started
 * before its tests, closed after them. `running` is the service once started.
 */
export function useSchedulerService(): { readonly running: RunningScheduler } {
  let redis: LocalRedis | undefined;
  let running: RunningScheduler | undefined;
  before(async () => {
    redis = await startRedis();
    running = await runScheduler(loadSchedulerConfig({ redisUrl: redis.url, prefix: uniquePrefix(), port: 0, tasks: [TASKS_DIR], tickMs: 200 }, {}), { log: silentLogger });
  });
  after(async () => {
    await running?.close();
    await redis?.close();
  });
  return {
    get running() {
      if (!running) throw new Error("the scheduler service starts in before(): use it inside a test");
      return running;
    },
  };
}
