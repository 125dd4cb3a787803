/**
 * The start (enqueue-to-start) figures of a `bench scale` campaign: a first attempt's start is its job's
 * processedOn minus its timestamp, as BullMQ records them; apart, the first wave (one job per device, enqueued
 * together), the jobs enqueued as episodes ended, and the second half of the campaign (episodes that started
 * together have drifted apart by then, with --step-jitter, as in a farm that has been running for a while).
 *
 * And where a job's start time goes, from three clocks on one machine: the job's `timestamp` (the
 * scheduler's, when BullMQ built the job), the Redis time of the job's `added` and `active` events (the
 * millisecond of their entry ids in the queue's events stream: when Redis ran the add, and when it moved the
 * job to active) and its `processedOn` (the worker host's, when it sent the move to active). So:
 *   enqueue — timestamp → added: the scheduler's addBulk reaching Redis;
 *   queued  — added → active: the job waiting in Redis until a host with a free device fetched it;
 *   fetch   — processedOn → active: the host's fetch command on its way to Redis (the rest of `queued` is
 *             the host noticing the job: its blocked fetch's answer waiting for its event loop).
 * The events stream is capped (BullMQ keeps about the last 10,000 events), so only the jobs whose events are
 * still in it count; `jobs` says how many.
 */
import type { Queue } from "bullmq";
import { episodeJobId, QUEUE_NAMES, type RedisClient } from "@farm/queue";
import { quantiles, type Quantiles } from "./stats.ts";

interface JobTimes {
  id: string;
  timestamp: number;
  processedOn: number;
}

export interface DispatchBreakdown {
  /** Jobs whose events Redis still holds. */
  jobs: number;
  enqueue: Quantiles;
  queued: Quantiles;
  fetch: Quantiles;
}

const PAGE = 5000;

/** The Redis time (ms) of each job's first `added` and `active` event in `stream`. */
async function eventTimes(redis: RedisClient, stream: string, wanted: ReadonlySet<string>): Promise<Map<string, { added?: number; active?: number }>> {
  const times = new Map<string, { added?: number; active?: number }>();
  let from = "-";
  for (;;) {
    const page = await redis.xrange(stream, from, "+", "COUNT", PAGE);
    for (const [id, fields] of page) {
      const f = new Map<string, string>();
      for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!, fields[i + 1]!);
      const event = f.get("event");
      const jobId = f.get("jobId");
      if ((event !== "added" && event !== "active") || !jobId || !wanted.has(jobId)) continue;
      const t = times.get(jobId) ?? {};
      t[event] ??= Number(id.split("-")[0]);
      times.set(jobId, t);
    }
    if (page.length < PAGE) return times;
    from = `(${page.at(-1)![0]}`;
  }
}

async function dispatchBreakdown(redis: RedisClient, eventsStream: string, jobs: readonly JobTimes[]): Promise<DispatchBreakdown> {
  const times = await eventTimes(redis, eventsStream, new Set(jobs.map((j) => j.id)));
  const enqueue: number[] = [];
  const queued: number[] = [];
  const fetch: number[] = [];
  for (const j of jobs) {
    const t = times.get(j.id);
    if (t?.added === undefined || t.active === undefined) continue;
    enqueue.push(t.added - j.timestamp);
    queued.push(t.active - t.added);
    fetch.push(t.active - j.processedOn);
  }
  return { jobs: enqueue.length, enqueue: quantiles(enqueue), queued: quantiles(queued), fetch: quantiles(fetch) };
}

export interface CampaignStarts {
  all: Quantiles;
  firstWave: Quantiles;
  later: Quantiles;
  settled: Quantiles;
  /** The first job index of the second half. */
  settledFrom: number;
  breakdown: DispatchBreakdown;
}

/** The start figures of campaign `campaignId`'s `episodes` jobs on a farm of `devices` devices. */
export async function campaignStarts(o: { queue: Queue; redis: RedisClient; prefix: string; campaignId: string; episodes: number; devices: number }): Promise<CampaignStarts> {
  const jobs: JobTimes[] = [];
  const all: number[] = [];
  const firstWave: number[] = [];
  const later: number[] = [];
  const settled: number[] = [];
  const settledFrom = Math.max(o.devices, Math.floor(o.episodes / 2));
  for (let i = 0; i < o.episodes; i++) {
    const job = await o.queue.getJob(episodeJobId(o.campaignId, i));
    if (!(job?.id && job.processedOn && job.attemptsMade <= 1)) continue;
    const ms = job.processedOn - job.timestamp;
    all.push(ms);
    (i < o.devices ? firstWave : later).push(ms);
    if (i >= settledFrom) settled.push(ms);
    jobs.push({ id: job.id, timestamp: job.timestamp, processedOn: job.processedOn });
  }
  const breakdown = await dispatchBreakdown(o.redis, `${o.prefix}:${QUEUE_NAMES.episodes}:events`, jobs);
  return { all: quantiles(all), firstWave: quantiles(firstWave), later: quantiles(later), settled: quantiles(settled), settledFrom, breakdown };
}
