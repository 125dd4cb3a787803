/**
 * Test harness: a private Redis and adb server, simulated emulators, a BullMQ queue to add episode jobs
 * to (the way the scheduler does: deterministic ids, default job options), and helpers to wait and read.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Queue, QueueEvents, type Job } from "bullmq";
import { startAdbServer, startRedis, type LocalAdbServer, type LocalRedis } from "@farm/local-services";
import { startSimulatedDevices, type SimFleet } from "@farm/simulator";
import { defaultEpisodeJobOptions, EPISODE_JOB_VERSION, episodeJobId, QUEUE_NAMES, redisConnection, type EpisodeJobData, type EpisodeOptions } from "@farm/queue";
import { loadTaskFile, type LoadedTask } from "@farm/task";
import { readTrajectories, type StoredEpisode } from "@farm/trajectory";

export const REPO = path.resolve(import.meta.dirname, "../../..");
export const TASK_FILE = path.join(REPO, "tasks/classic_2048.textproto");

export interface Harness {
  redis: LocalRedis;
  adb: LocalAdbServer;
  sims: SimFleet;
  prefix: string;
  queue: Queue;
  events: QueueEvents;
  task: LoadedTask;
  tmp: string;
  close(): Promise<void>;
}

export const conn = (url: string, role: "command" | "blocking" = "command") => redisConnection(url, role);

export async function startHarness(devices: number): Promise<Harness> {
  const redis = await startRedis();
  const adb = await startAdbServer();
  const sims = await startSimulatedDevices({ adbPort: adb.port, count: devices });
  const prefix = `{wt${process.pid}}`;
  const queue = new Queue(QUEUE_NAMES.episodes, { connection: conn(redis.url), prefix });
  const events = new QueueEvents(QUEUE_NAMES.episodes, { connection: conn(redis.url, "blocking"), prefix });
  await events.waitUntilReady();
  const tmp = mkdtempSync(path.join(os.tmpdir(), "farm-worker-test-"));
  const task = loadTaskFile(TASK_FILE);
  return {
    redis,
    adb,
    sims,
    prefix,
    queue,
    events,
    task,
    tmp,
    async close() {
      await events.close().catch(() => undefined);
      await queue.close().catch(() => undefined);
      await sims.close().catch(() => undefined);
      await adb.close().catch(() => undefined);
      await redis.close().catch(() => undefined);
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

export interface CampaignJobs {
  campaignId: string;
  episodes: number;
  taskId?: string;
  taskHash?: string;
  options?: EpisodeOptions;
  attempts?: number;
}

/** Adds the campaign's episode jobs as the scheduler does (same ids → adding again adds nothing). */
export async function addCampaign(h: Harness, c: CampaignJobs): Promise<Job[]> {
  const jobs = Array.from({ length: c.episodes }, (_, i) => {
    const data: EpisodeJobData = {
      v: EPISODE_JOB_VERSION,
      campaignId: c.campaignId,
      episodeIndex: i,
      taskId: c.taskId ?? h.task.task.id,
      taskHash: c.taskHash ?? h.task.hash,
      policy: { spec: "random" },
      seed: 1000 + i,
      options: c.options ?? { maxEpisodeSteps: 20 },
    };
    return { name: "episode", data, opts: { ...defaultEpisodeJobOptions, backoff: { type: "fixed", delay: 200 }, ...(c.attempts ? { attempts: c.attempts } : {}), jobId: episodeJobId(c.campaignId, i) } };
  });
  return h.queue.addBulk(jobs);
}

/** Waits until every job of the campaign is completed or failed; returns the counts. */
export async function waitForCampaign(h: Harness, campaignId: string, episodes: number, timeoutMs: number): Promise<{ completed: number; failed: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let completed = 0;
    let failed = 0;
    for (let i = 0; i < episodes; i++) {
      const state = await h.queue.getJobState(episodeJobId(campaignId, i));
      if (state === "completed") completed++;
      else if (state === "failed") failed++;
    }
    if (completed + failed === episodes) return { completed, failed };
    if (Date.now() > deadline) throw new Error(`campaign ${campaignId}: only ${completed} completed, ${failed} failed of ${episodes} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every episode stored under `out`, or only those of `campaignId`. */
export async function readEpisodes(out: string, campaignId?: string): Promise<StoredEpisode[]> {
  const all: StoredEpisode[] = [];
  try {
    statSync(out);
  } catch {
    return all;
  }
  for await (const e of readTrajectories(out)) if (campaignId === undefined || e.campaignId === campaignId) all.push(e);
  return all;
}

/** The campaign's episode jobs by index (undefined where a job is gone). */
export async function campaignJobs(h: Harness, campaignId: string, episodes: number): Promise<Array<Job | undefined>> {
  return Promise.all(Array.from({ length: episodes }, (_, i) => h.queue.getJob(episodeJobId(campaignId, i))));
}

/** Polls `check` every `everyMs` until it holds; after `timeoutMs` fails naming `what` (and `detail()`, if given). */
export async function until(what: string, timeoutMs: number, check: () => boolean | Promise<boolean>, o: { everyMs?: number; detail?: () => string } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${o.detail ? `: ${o.detail()}` : ""}`);
    await new Promise((r) => setTimeout(r, o.everyMs ?? 20));
  }
}

/** Files under `out` that are not committed trajectory files: anything but `*.avro`, and hidden files. */
export function temporaryFiles(out: string, opts: { running?: boolean } = {}): string[] {
  // A running worker keeps settled markers' files as blanks for the next ones (removed when it exits).
  const blank = (f: string) => opts.running === true && path.basename(path.dirname(f)) === ".free" && path.basename(path.dirname(path.dirname(f))) === ".pending";
  return listFiles(out).filter((f) => (!f.endsWith(".avro") || path.basename(f).startsWith(".")) && !blank(f));
}

/** Every file under `dir` (recursively), hidden ones included. */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let names: string[] = [];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = path.join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

export const FAST_EPISODE = { settleMs: 20, stepTimeoutMs: 3000, resetTimeoutMs: 8000, adbCallTimeoutMs: 3000, recoveryBackoffMs: 100, recoveryWaitMs: 3000 };
