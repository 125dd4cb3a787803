/**
 * `farm bench farm [--devices N] [--episodes M]`: the whole farm under load — a private Redis and adb
 * server, N simulated emulators, the worker service, a campaign of Classic 2048 with the random policy —
 * measured in one run: episodes/s, steps/s, worker CPU per step, enqueue-to-start latency p50/p99.
 *
 * The simulated emulators run in a child process (`farm sim`), so this process's CPU time is the
 * worker's (plus the bench's campaign status polls, one every 250 ms); the simulators' CPU is read from /proc and
 * reported beside it.
 * The campaign goes through the scheduler with a window of in-flight jobs (default = devices), topped up
 * as episodes finish, so the start latency measures dispatch (scheduler top-up + BullMQ + worker fetch),
 * not the backlog. The scheduler runs in its own process (`farm scheduler`, as deployed), so this process's CPU
 * is the worker host's; the scheduler's is read from /proc and reported beside it.
 * A warm-up campaign (--warmup episodes, default 4 per device) runs first and is not measured: a worker runs for
 * hours, and what it costs per step then is the figure, not V8 compiling its hot paths in the first seconds.
 * Options: --devices (16), --episodes (64), --warmup (4 × devices), --max-steps (50), --settle-ms (20), --window (devices),
 * --profile (simulator latency profile, default instant), --transport grpc|adb (default grpc: actions over
 * each emulator's gRPC endpoint; adb: the shell action channel; steps and logcat are adb either way).
 * Last line: `devices=<n> transport=<t> episodes_s=<x> steps_s=<y> worker_cpu_us_per_step=<z> start_p99_ms=<w>`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startLocalWorkerFarm } from "@farm/local-farm";
import { createLogger } from "@farm/log";
import { bullConnection, episodeJobId, EpisodeQueue, QUEUE_NAMES } from "@farm/queue";
import type { CampaignClient } from "@farm/scheduler";
import { loadTaskFile } from "@farm/task";
import { intOpt, profileOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { startSchedulerChild } from "./scheduler-child.ts";
import { simChildDevices } from "./sim-child.ts";
import { procCpuSec, quantile } from "./stats.ts";
import { sleep } from "@farm/time";
import { benchLogLevel } from "./settings.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const PREFIX = "{bench}";

/** The pid of the adb server listening on `port` (found by its command line in /proc), if any. */
function adbServerPid(port: number): number | undefined {
  try {
    for (const d of readdirSync("/proc")) {
      if (!/^\d+$/.test(d)) continue;
      let cmd: string[];
      try {
        cmd = readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0");
      } catch {
        continue;
      }
      if (/(^|\/)adb$/.test(cmd[0] ?? "") && cmd.includes("server") && cmd[cmd.indexOf("-P") + 1] === String(port)) return Number(d);
    }
  } catch {
    // not Linux
  }
  return undefined;
}

/**
 * Polled slowly: a status read costs this process CPU that is the bench's, not the farm's; the wall time ends
 * at the last job's finish (from Redis), not at the poll that noticed it.
 */
async function untilDone(scheduler: CampaignClient, campaignId: string): Promise<void> {
  let st = await scheduler.status(campaignId);
  while (st.state === "running") {
    await sleep(250);
    st = await scheduler.status(campaignId);
  }
}

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const devices = intOpt(opts, "devices", 16);
    const episodes = intOpt(opts, "episodes", 64);
    const maxSteps = intOpt(opts, "max-steps", 50);
    const warmup = intOpt(opts, "warmup", devices * 4, 0);
    const settleMs = intOpt(opts, "settle-ms", 20, 0);
    const window = intOpt(opts, "window", devices);
    const profile = profileOpt(opts);
    const transport = typeof opts.transport === "string" ? opts.transport : "grpc";
    if (transport !== "grpc" && transport !== "adb") throw new Error(`--transport must be grpc or adb, got ${transport}`);
    const out = (line: string) => process.stdout.write(`${line}\n`);
    const logger = createLogger({ service: "bench-farm", level: benchLogLevel() });
    const tmp = mkdtempSync(path.join(os.tmpdir(), "farm-bench-"));
    const taskFile = path.join(REPO, "tasks/classic_2048.textproto");
    const task = loadTaskFile(taskFile);
    let simPid: number | undefined;
    // Every device bound (setup done) before the campaign starts, so binding is not measured.
    const farm = await startLocalWorkerFarm({
      devices: simChildDevices(devices, profile, [], (sims) => (simPid = sims.child.pid)),
      taskPaths: [taskFile],
      outDir: path.join(tmp, "out"),
      queuePrefix: PREFIX,
      logger,
      worker: { episode: { settleMs }, ...(transport === "adb" ? { grpc: { mode: "off" } } : {}) },
      bindTimeoutMs: 120_000,
    }).catch((e: unknown) => {
      rmSync(tmp, { recursive: true, force: true });
      throw e;
    });
    try {
      // The scheduler in its own process, as deployed: this process is then the worker host alone.
      const sched = await startSchedulerChild({ redisUrl: farm.redisUrl, prefix: PREFIX, taskPaths: [taskFile], windowSize: window });
      farm.releasers.add("scheduler", () => sched.close());
      const jobs = bullConnection(farm.redisUrl);
      const queue = new EpisodeQueue(QUEUE_NAMES.episodes, { connection: jobs.connection, prefix: PREFIX });
      farm.releasers.add("job reader", () => queue.close().finally(() => jobs.close()));
      const { adbPort } = farm;
      const grpcDevices = Object.keys(farm.grpcEndpoints).length;
      const campaignId = "bench";
      const campaign = (id: string, n: number) => ({ id, taskId: task.task.id, policy: "random", episodes: n, options: { maxEpisodeSteps: maxSteps } });
      if (warmup > 0) {
        await sched.client.submit(campaign("warmup", warmup));
        await untilDone(sched.client, "warmup");
      }
      const cpu0 = process.cpuUsage();
      const simCpu0 = procCpuSec(simPid);
      const schedCpu0 = procCpuSec(sched.pid);
      const adbPid = adbServerPid(adbPort);
      const adbCpu0 = procCpuSec(adbPid);
      const t0 = performance.now();
      await sched.client.submit(campaign(campaignId, episodes));
      const tEpoch0 = Date.now();
      await untilDone(sched.client, campaignId);
      let wallSec = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const simCpuSec = procCpuSec(simPid) - simCpu0;
      const schedCpuSec = procCpuSec(sched.pid) - schedCpu0;
      const adbCpuSec = procCpuSec(adbPid) - adbCpu0;

      // Per-job figures from Redis: steps from the results, start latency = processedOn − timestamp.
      let steps = 0;
      let completed = 0;
      const latencies: number[] = [];
      const outcomes: Record<string, number> = {};
      let lastFinish = 0;
      for (let i = 0; i < episodes; i++) {
        const job = await queue.getJob(episodeJobId(campaignId, i));
        if (!job) continue;
        if (job.processedOn) latencies.push(job.processedOn - job.timestamp);
        if (job.finishedOn) lastFinish = Math.max(lastFinish, job.finishedOn);
        const r = job.returnvalue as { steps?: number; cause?: string } | null;
        if (r && typeof r.steps === "number") {
          completed++;
          steps += r.steps;
          outcomes[r.cause ?? "?"] = (outcomes[r.cause ?? "?"] ?? 0) + 1;
        }
      }
      if (lastFinish > tEpoch0) wallSec = (lastFinish - tEpoch0) / 1000;
      latencies.sort((a, b) => a - b);
      const workerCpuUsPerStep = steps ? (cpu.user + cpu.system) / steps : NaN;
      const simCpuUsPerStep = steps ? (simCpuSec * 1e6) / steps : NaN;
      const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");

      out(`farm bench: ${devices} simulated emulators (${profile}, actions over ${transport === "grpc" ? `gRPC on ${grpcDevices} of them` : "the adb shell channel"}), ${episodes} episodes of ${task.task.id} (after ${warmup} not measured), random policy, max ${maxSteps} steps, window ${window}, settle ${settleMs} ms`);
      out("");
      out("| figure | value |");
      out("|---|---|");
      out(`| episodes completed | ${completed} of ${episodes} (${Object.entries(outcomes).map(([k, v]) => `${k} ${v}`).join(", ")}) |`);
      out(`| wall time | ${f(wallSec, 2)} s |`);
      out(`| episodes/s | ${f(completed / wallSec, 2)} |`);
      out(`| steps/s | ${f(steps / wallSec)} (${f(steps / wallSec / devices)} per device) |`);
      out(`| worker CPU per step | ${f(workerCpuUsPerStep)} µs (user ${f(cpu.user / 1e6, 2)} s + system ${f(cpu.system / 1e6, 2)} s; this process: the worker host) |`);
      out(`| scheduler CPU per step | ${f(steps ? (schedCpuSec * 1e6) / steps : NaN)} µs (its own process, from /proc; worker + scheduler ${f(steps ? workerCpuUsPerStep + (schedCpuSec * 1e6) / steps : NaN)} µs) |`);
      out(`| simulator CPU per step | ${f(simCpuUsPerStep)} µs (child process, from /proc) |`);
      out(`| adb server CPU per step | ${f(steps ? (adbCpuSec * 1e6) / steps : NaN)} µs (${f((adbCpuSec / wallSec) * 100)} % of one core; from /proc) |`);
      out(`| worker CPU utilisation | ${f(((cpu.user + cpu.system) / 1e6 / wallSec) * 100)} % of one core |`);
      // The farm's own overhead: the worker's CPU per step against the wall time one device spends per step.
      const stepWallUs = steps ? (wallSec * 1e6 * devices) / steps : NaN;
      out(`| farm overhead | ${f((workerCpuUsPerStep / stepWallUs) * 100, 2)} % of a device's wall time per step (worker CPU ${f(workerCpuUsPerStep)} µs of ${f(stepWallUs / 1000, 2)} ms) |`);
      out(`| enqueue-to-start p50 / p99 / max | ${f(quantile(latencies, 0.5))} / ${f(quantile(latencies, 0.99))} / ${f(latencies[latencies.length - 1] ?? NaN)} ms |`);
      out("");
      out(`devices=${devices} transport=${transport} episodes_s=${f(completed / wallSec, 3)} steps_s=${f(steps / wallSec)} worker_cpu_us_per_step=${f(workerCpuUsPerStep)} start_p99_ms=${f(quantile(latencies, 0.99))}`);
    } finally {
      await farm.close().finally(() => rmSync(tmp, { recursive: true, force: true }));
    }
  },
};
