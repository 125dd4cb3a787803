/**
 * The fleet page's charts over the last hour, from what the farm already has in Redis, sampled by the scheduler
 * every `sampleMs` into a bounded ring (an hour of points; at most MAX_SERIES campaigns and hosts each):
 *
 *   per campaign  episodes finished (counter: the campaign's completed + failed), failed jobs (counter),
 *                 steps/s (its busy devices' heartbeats), mean start latency of the jobs that started
 *   per host      episodes done (counter: its devices' heartbeats), steps/s, device errors (heartbeats whose
 *                 last error is newer than the previous sample)
 *
 * GET /fleet/series answers the points with the rates between them (a rate belongs to the later point).
 */
import type { DeviceBeat } from "@farm/queue";
import { parseEpisodeJobId } from "@farm/queue";
import type { Logger } from "@farm/log";
import type { Scheduler } from "./scheduler.ts";

export const MAX_SERIES = 12;
const HOUR_MS = 3_600_000;
const LATENCY_JOBS = 200;

interface CampaignPoint {
  finished: number;
  failed: number;
  stepsPerSec: number;
  /** Mean start latency (s) of the jobs that started since the previous sample; null when none did. */
  startLatencySec: number | null;
  started: number;
}

interface HostPoint {
  episodesDone: number;
  stepsPerSec: number;
  deviceErrors: number;
  devices: number;
}

export interface SeriesPoint {
  t: number;
  campaigns: Record<string, CampaignPoint>;
  hosts: Record<string, HostPoint>;
}

export interface FleetSeries {
  sampleMs: number;
  t: number[];
  campaigns: Record<string, { finished: number[]; episodesPerSec: (number | null)[]; failed: number[]; failures: (number | null)[]; stepsPerSec: number[]; startLatencySec: (number | null)[] }>;
  hosts: Record<string, { episodesDone: number[]; episodesPerSec: (number | null)[]; stepsPerSec: number[]; deviceErrors: number[] }>;
}

export interface FleetSampler {
  series(): FleetSeries;
  /** Takes one sample now (tests; the timer calls it too). */
  sample(): Promise<void>;
  close(): void;
}

type SchedulerView = Pick<Scheduler, "devices" | "list" | "queue">;

export function startFleetSampler(scheduler: SchedulerView, o: { sampleMs: number; log?: Logger }): FleetSampler {
  const points: SeriesPoint[] = [];
  const keep = Math.max(2, Math.ceil(HOUR_MS / o.sampleMs) + 1);
  let last = 0;
  let closed = false;
  let running: Promise<void> | undefined;
  let failures = 0;

  async function sampleNow(): Promise<void> {
    const now = Date.now();
    const [{ devices }, campaigns, jobs] = await Promise.all([
      scheduler.devices(),
      scheduler.list(MAX_SERIES),
      scheduler.queue.getJobs(["active", "completed", "failed"], 0, LATENCY_JOBS - 1).catch(() => []),
    ]);
    const prevT = last || now - o.sampleMs;
    const cp: Record<string, CampaignPoint> = {};
    for (const c of campaigns) cp[c.id] = { finished: c.finished, failed: c.failed, stepsPerSec: 0, startLatencySec: null, started: 0 };
    const hp: Record<string, HostPoint> = {};
    const hostsSeen = new Set<string>();
    for (const d of devices as DeviceBeat[]) {
      if (!hp[d.host]) {
        if (hostsSeen.size >= MAX_SERIES) continue;
        hostsSeen.add(d.host);
        hp[d.host] = { episodesDone: 0, stepsPerSec: 0, deviceErrors: 0, devices: 0 };
      }
      const h = hp[d.host]!;
      h.devices++;
      h.episodesDone += d.episodesDone;
      h.stepsPerSec += d.stepsPerSec;
      if (d.lastErrorAt !== undefined && d.lastErrorAt > prevT) h.deviceErrors++;
      const c = d.campaignId !== undefined && d.state === "busy" ? cp[d.campaignId] : undefined;
      if (c) c.stepsPerSec += d.stepsPerSec;
    }
    const sums: Record<string, number> = {};
    for (const j of jobs) {
      if (!j?.processedOn || j.processedOn <= prevT || j.processedOn > now) continue;
      const ref = parseEpisodeJobId(j.id);
      const c = ref ? cp[ref.campaignId] : undefined;
      if (!c || !ref) continue;
      c.started++;
      sums[ref.campaignId] = (sums[ref.campaignId] ?? 0) + Math.max(0, j.processedOn - j.timestamp) / 1000;
    }
    for (const [id, total] of Object.entries(sums)) cp[id]!.startLatencySec = total / cp[id]!.started;
    points.push({ t: now, campaigns: cp, hosts: hp });
    while (points.length > keep) points.shift();
    last = now;
  }

  const sample = () => {
    running ??= sampleNow()
      .catch((e: Error) => {
        if (failures++ % 30 === 0) o.log?.warn({ event: "fleet:sample-failed", error: e.message }, "fleet chart sample failed");
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const timer = setInterval(() => {
    if (!closed) void sample();
  }, o.sampleMs);
  timer.unref();
  void sample();

  return {
    sample,
    series() {
      const t = points.map((p) => p.t);
      const rate = (vals: number[], i: number) => (i === 0 ? null : Math.max(0, vals[i]! - vals[i - 1]!) / ((t[i]! - t[i - 1]!) / 1000));
      const delta = (vals: number[], i: number) => (i === 0 ? null : Math.max(0, vals[i]! - vals[i - 1]!));
      const campaignIds = [...new Set(points.flatMap((p) => Object.keys(p.campaigns)))].slice(-MAX_SERIES);
      const hostNames = [...new Set(points.flatMap((p) => Object.keys(p.hosts)))].slice(0, MAX_SERIES);
      const campaigns: FleetSeries["campaigns"] = {};
      for (const id of campaignIds) {
        // A campaign absent from a sample (older than the newest MAX_SERIES) keeps its last counts.
        let prev: CampaignPoint = { finished: 0, failed: 0, stepsPerSec: 0, startLatencySec: null, started: 0 };
        const rows = points.map((p) => {
          const c = p.campaigns[id];
          prev = c ?? { ...prev, stepsPerSec: 0, startLatencySec: null, started: 0 };
          return prev;
        });
        const finished = rows.map((r) => r.finished);
        const failed = rows.map((r) => r.failed);
        campaigns[id] = {
          finished,
          episodesPerSec: finished.map((_, i) => rate(finished, i)),
          failed,
          failures: failed.map((_, i) => delta(failed, i)),
          stepsPerSec: rows.map((r) => r.stepsPerSec),
          startLatencySec: rows.map((r) => r.startLatencySec),
        };
      }
      const hosts: FleetSeries["hosts"] = {};
      for (const h of hostNames) {
        const rows = points.map((p) => p.hosts[h] ?? { episodesDone: 0, stepsPerSec: 0, deviceErrors: 0, devices: 0 });
        const done = rows.map((r) => r.episodesDone);
        hosts[h] = { episodesDone: done, episodesPerSec: done.map((_, i) => rate(done, i)), stepsPerSec: rows.map((r) => r.stepsPerSec), deviceErrors: rows.map((r) => r.deviceErrors) };
      }
      return { sampleMs: o.sampleMs, t, campaigns, hosts };
    },
    close() {
      closed = true;
      clearInterval(timer);
    },
  };
}
