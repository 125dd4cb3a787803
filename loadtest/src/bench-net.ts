/**
 * `farm bench net --rtt-ms R`: the farm across a real network (issue 30). Worker hosts in their own network
 * namespaces (4 × 64 FakeDevice-backed devices at an emulator's pace by default) reach Redis in a hub
 * namespace over veth links, through a delay relay that adds R ms per round trip; the scheduler (this
 * process) reaches Redis over its own link without added delay, as one beside Redis would. The same farm
 * first runs with no added delay (`vs_loopback` = episodes/s at R over episodes/s at 0, the relay in the
 * path both times, so only the latency differs).
 * Last line: `rtt_ms= episodes_s= vs_loopback= start_p99_ms= commit_p99_ms= redis_round_trips_per_episode=`.
 *   start: a job's enqueue to its start (processedOn − timestamp), first attempts;
 *   commit: the episode's last step to the job's finish (finishedOn − processedOn − the episode's duration):
 *           the file, the claim, the job's completion, i.e. what an episode's end costs over the link;
 *   round trips: the hosts' writes to Redis through their relays (a pipeline counts once) per episode.
 * Needs root (network namespaces); says why and stops otherwise.
 */
import { episodeJobId } from "@farm/queue";
import { intOpt } from "./options.ts";
import { quantiles } from "./stats.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { inLab, type NetLab } from "./net-lab/index.ts";
import { LabFarm, type LabFarmOptions } from "./net-lab/lab-farm.ts";
import { CommandCensus, perEpisode } from "./net-lab/command-census.ts";

interface Measured {
  episodesPerSec: number;
  startP99: number;
  commitP99: number;
  /** The typical episode's end: with CPU to spare, about the sequential round trips × the RTT. */
  commitP50: number;
  roundTripsPerEpisode: number;
  commandsPerEpisode: number;
  completed: number;
  failed: number;
  duplicatesPrevented: number;
  /** With --census: Redis commands per episode by kind, the hosts' and the scheduler's. */
  census?: { hosts: string; scheduler: string };
}

async function measure(farm: LabFarm, id: string, episodes: number, maxSteps: number, census: boolean): Promise<Measured> {
  const counting = census ? await CommandCensus.start(farm.redis) : undefined;
  const before = await farm.redisRequests();
  const commandsBefore = await farm.redisCommands();
  const t0 = performance.now();
  const st = await farm.runCampaign(id, episodes, maxSteps);
  const wallSec = (performance.now() - t0) / 1000;
  const requests = (await farm.redisRequests()) - before;
  const commands = (await farm.redisCommands()) - commandsBefore;
  const counted = counting?.close();
  const starts: number[] = [];
  const commits: number[] = [];
  for (let i = 0; i < episodes; i++) {
    const job = await farm.scheduler.queue.getJob(episodeJobId(id, i));
    if (!job?.processedOn || !job.finishedOn) continue;
    if (job.attemptsMade <= 1) starts.push(job.processedOn - job.timestamp);
    const duration = (job.returnvalue as { durationMs?: number } | undefined)?.durationMs;
    if (duration !== undefined) commits.push(Math.max(0, job.finishedOn - job.processedOn - duration));
  }
  return {
    episodesPerSec: st.completed / wallSec,
    startP99: quantiles(starts).p99,
    commitP99: quantiles(commits).p99,
    commitP50: quantiles(commits).p50,
    roundTripsPerEpisode: requests / Math.max(1, st.completed),
    commandsPerEpisode: commands / Math.max(1, st.completed),
    completed: st.completed,
    failed: st.failed,
    duplicatesPrevented: st.commits.duplicatesPrevented,
    ...(counted ? { census: { hosts: perEpisode(counted.hosts, st.completed), scheduler: perEpisode(counted.scheduler, st.completed) } } : {}),
  };
}

async function runAt(lab: NetLab, farmOpts: LabFarmOptions, o: { episodes: number; warmup: number; maxSteps: number; label: string; census?: boolean }): Promise<Measured> {
  const farm = await LabFarm.start(lab, farmOpts);
  try {
    // Not measured: a fresh host's first episodes pay for V8 compiling the hot paths.
    if (o.warmup > 0) await farm.runCampaign(`warmup-${o.label}`, o.warmup, o.maxSteps);
    return await measure(farm, `net-${o.label}`, o.episodes, o.maxSteps, o.census === true);
  } finally {
    await farm.close();
  }
}

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const rttMs = intOpt(opts, "rtt-ms", 1, 0, 1000);
    const hosts = intOpt(opts, "hosts", 4, 1, 16);
    const perHost = intOpt(opts, "devices-per-host", 64);
    const stepMs = intOpt(opts, "step-ms", 100, 0);
    const jitterPct = intOpt(opts, "step-jitter", 50, 0, 90);
    const maxSteps = intOpt(opts, "max-steps", 30);
    const devices = hosts * perHost;
    const episodes = intOpt(opts, "episodes", devices * 2);
    const warmup = intOpt(opts, "warmup", devices, 0);
    const census = opts.census === true;
    const out = (line: string): void => void process.stdout.write(`${line}\n`);
    await inLab("farm bench net", hosts, async (lab) => {
      const base: LabFarmOptions = { devicesPerHost: perHost, rttMs: 0, stepMs, jitterPct };
      const run = { episodes, warmup, maxSteps };
      const at0 = await runAt(lab, base, { ...run, label: "0ms" });
      const atR = await runAt(lab, { ...base, rttMs }, { ...run, label: `${rttMs}ms`, census });
      out(`farm bench net: ${hosts} worker hosts × ${perHost} devices in their own network namespaces, Redis in a hub namespace, ${episodes} episodes of ≤${maxSteps} steps at ${stepMs} ms per step (± ${jitterPct} %), after ${warmup} not measured`);
      for (const [label, m] of [["no added delay", at0], [`${rttMs} ms round trip`, atR]] as const) {
        out(`  ${label}: ${m.episodesPerSec.toFixed(1)} episodes/s, ${m.completed} completed, ${m.failed} failed, ${m.duplicatesPrevented} duplicates prevented; start p99 ${m.startP99.toFixed(1)} ms, commit p50 ${m.commitP50.toFixed(1)} ms, p99 ${m.commitP99.toFixed(1)} ms, ${m.roundTripsPerEpisode.toFixed(1)} Redis round trips per episode from the hosts (${m.commandsPerEpisode.toFixed(1)} commands per episode in all, the scheduler's and status polls included)`);
      }
      if (atR.census) {
        out(`  Redis commands per episode at ${rttMs} ms (MONITOR, so the figures above are a little slower), from the hosts: ${atR.census.hosts}`);
        out(`  from the scheduler: ${atR.census.scheduler}`);
      }
      out(`rtt_ms=${rttMs} episodes_s=${atR.episodesPerSec.toFixed(1)} vs_loopback=${(atR.episodesPerSec / at0.episodesPerSec).toFixed(3)} start_p99_ms=${atR.startP99.toFixed(1)} commit_p99_ms=${atR.commitP99.toFixed(1)} redis_round_trips_per_episode=${atR.roundTripsPerEpisode.toFixed(1)}`);
    });
  },
};
