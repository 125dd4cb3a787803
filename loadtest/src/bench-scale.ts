/**
 * `farm bench scale --devices N [--hosts H]`: N simulated devices split over H worker processes on one
 * Redis, to measure what the farm costs Redis per device and per host: Redis connected clients (the
 * hosts' share, above the bench's own), Redis CPU (INFO cpu deltas over the campaign), dispatch
 * (enqueue-to-start) p50/p99 and episodes/s.
 *
 * Each host is the real WorkerService (one BullMQ Worker per host, the device pool, the processor,
 * exactly-once commits) over in-memory FakeDevices (scale-host.ts): 1,000 simulated emulators behind one
 * adb server are too many for this 2-core machine, and the FakeDevice passes the driver's conformance
 * tests. The scheduler (in this process) feeds a campaign of --episodes (default 3 per device) with a
 * window of N in flight, topped up as episodes finish, so start latency is dispatch, not backlog.
 * Options: --devices (100), --hosts (1), --episodes (3 per device), --warmup (2 per device, not measured),
 * --max-steps (5), --step-ms (0: each step takes what the host's CPU takes; 20–100 is an emulator's pace: the
 * wait after each action before its rewards are read), --step-jitter (0: percent by which a step's time varies
 * around --step-ms, uniformly; episodes that start together then drift apart, as on emulators, instead of
 * ending in waves), --settle-ms (0: the wait after each setup/reset step; an emulator's is ~500), --window (N:
 * jobs in flight), --host-nice (10: the hosts' CPU priority below Redis and the scheduler, which have machines of
 * their own in a deployment; 0: all alike). Where a start's time goes: scale-starts.ts.
 * Beside the farm it measures the fetch alone on the same Redis (bullmq-floor.ts): the same burst of jobs with
 * no episode behind them, taken by BullMQ's Worker and by the farm's (BurstFetchWorker).
 * Last line: `devices=<n> hosts=<h> redis_clients=<c> redis_cpu_pct=<r> start_p99_ms=<w> episodes_s=<x> first_wave_ms=<f>
 * steady_start_p99_ms=<s>` (first wave: the last start of the jobs enqueued at once, one per device; steady: p99
 * of the jobs enqueued as episodes ended, the figure that holds at an emulator's pace).
 * For digging: SCALE_HOST_LOG=<prefix> appends each host's stderr to <prefix>.<host>; SCALE_PROF=<dir> writes
 * each host's CPU profile there (node --cpu-prof).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startRedis } from "@farm/local-services";
import { createLogger } from "@farm/log";
import { createRedisClient } from "@farm/queue";
import { ENQUEUE_BATCH, Scheduler } from "@farm/scheduler";
import { loadTaskFile } from "@farm/task";
import { measureBullmqFloor } from "./bullmq-floor.ts";
import { fakeDeviceTask } from "./fake-device-task.ts";
import { intOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { campaignStarts } from "./scale-starts.ts";
import { procCpuSplit, type Quantiles } from "./stats.ts";
import { sleep, withDeadline } from "@farm/time";
import { benchLogLevel, scaleDebug } from "./settings.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const IDLE_WINDOW_MS = 3000;
const DEFAULT_HOST_NICE = 10;
const REPO = path.resolve(HERE, "../..");

/** `field:value` lines of an INFO section. */
function infoField(info: string, field: string): number {
  const m = new RegExp(`^${field}:([0-9.]+)`, "m").exec(info);
  return m ? Number(m[1]) : NaN;
}

interface Host {
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<void>;
}

/** A worker host at CPU priority `nice` (through nice(1), so every thread of the process has it). */
function startHost(name: string, devices: number, nice: number, env: Record<string, string>): Host {
  const { profDir, hostLog } = scaleDebug();
  const child = spawn("nice", ["-n", String(nice), process.execPath, ...(profDir ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`, "--cpu-prof-interval", "200"] : []), "--import", "tsx", path.join(HERE, "scale-host.ts")], {
    cwd: REPO,
    env: { ...process.env, ...env, SCALE_HOST: name, SCALE_DEVICES: String(devices) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr!.on("data", (b: Buffer) => {
    err = (err + b.toString()).slice(-3000);
    if (hostLog) appendFileSync(`${hostLog}.${name}`, b);
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const bound = new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (b: Buffer) => {
      if (b.toString().includes("ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`scale host ${name} exited (code ${code}) before its devices were bound:\n${err}`)));
  });
  const ready = withDeadline(bound, 300_000, () => new Error(`scale host ${name}: devices not bound within 300 s:\n${err}`));
  return { child, ready, exited };
}

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const devices = intOpt(opts, "devices", 100);
    const hosts = Math.min(devices, intOpt(opts, "hosts", 1));
    const episodes = intOpt(opts, "episodes", devices * 3);
    const maxSteps = intOpt(opts, "max-steps", 5);
    // A device's time per step (default 0: the hosts' CPU is the limit, a stress test of dispatch);
    // with real emulators a step takes tens of ms, so a host is far from CPU-bound.
    const settleMs = intOpt(opts, "settle-ms", 0, 0);
    const stepMs = intOpt(opts, "step-ms", 0, 0);
    const jitterPct = intOpt(opts, "step-jitter", 0, 0, 90);
    const warmup = intOpt(opts, "warmup", devices * 2, 0);
    const window = intOpt(opts, "window", devices);
    // Redis and the scheduler have machines of their own in a deployment; here they share two cores with every
    // host, so the hosts run at a lower CPU priority: with 1,000 busy devices Redis and the scheduler would
    // otherwise wait behind them for a core, which no deployment has them do. 0: all at one priority.
    const nice = intOpt(opts, "host-nice", DEFAULT_HOST_NICE, 0, 19);
    const out = (line: string) => process.stdout.write(`${line}\n`);
    const logger = createLogger({ service: "bench-scale", level: benchLogLevel() });
    const tmp = mkdtempSync(path.join(os.tmpdir(), "farm-bench-scale-"));
    const cleanups: Array<() => Promise<void>> = [];
    const running: Host[] = [];
    try {
      const redis = await startRedis();
      cleanups.push(() => redis.close());
      const prefix = "{scale}";
      const taskFile = fakeDeviceTask(tmp);
      const task = loadTaskFile(taskFile);
      const probe = createRedisClient(redis.url);
      cleanups.push(async () => void (await probe.quit().catch(() => undefined)));
      const scheduler = await Scheduler.create({ redisUrl: redis.url, prefix, taskPaths: [taskFile], windowSize: window, log: logger });
      await scheduler.start();
      cleanups.push(() => scheduler.close());
      const clientsBefore = infoField(await probe.info("clients"), "connected_clients");
      const cpuOf = async () => {
        const info = await probe.info("cpu");
        return infoField(info, "used_cpu_sys") + infoField(info, "used_cpu_user");
      };
      /** Redis's CPU over a quiet window, in % of one core. */
      const idleCpuPct = async () => {
        const c0 = await cpuOf();
        const t0 = performance.now();
        await sleep(IDLE_WINDOW_MS);
        return (((await cpuOf()) - c0) / ((performance.now() - t0) / 1000)) * 100;
      };
      // Redis with only the scheduler: its own housekeeping, subtracted from the hosts' idle figure below.
      const baselineRedisCpuPct = await idleCpuPct();

      const perHost = Array.from({ length: hosts }, (_, i) => Math.floor(devices / hosts) + (i < devices % hosts ? 1 : 0));
      for (let i = 0; i < hosts; i++) {
        running.push(startHost(`h${i}`, perHost[i]!, nice, { REDIS_URL: redis.url, SCALE_PREFIX: prefix, SCALE_OUT: path.join(tmp, `out-h${i}`), SCALE_TASK: taskFile, SCALE_SETTLE_MS: String(settleMs), SCALE_STEP_MS: String(stepMs), SCALE_STEP_JITTER: String(jitterPct / 100) }));
      }
      cleanups.push(async () => {
        for (const h of running) h.child.kill("SIGTERM");
        const timer = setTimeout(() => running.forEach((h) => h.child.kill("SIGKILL")), 20_000);
        await Promise.all(running.map((h) => h.exited));
        clearTimeout(timer);
      });
      await Promise.all(running.map((h) => h.ready));
      const clients = infoField(await probe.info("clients"), "connected_clients") - clientsBefore;

      const runCampaign = async (id: string, n: number) => {
        await scheduler.submit({ id, taskId: task.task.id, policy: "random", episodes: n, options: { maxEpisodeSteps: maxSteps } });
        let status = await scheduler.status(id);
        const deadline = Date.now() + 1_800_000;
        while (status.state === "running") {
          if (Date.now() > deadline) throw new Error(`campaign ${id} not done after 30 min: ${JSON.stringify(status)}`);
          await sleep(50);
          status = await scheduler.status(id);
        }
        return status;
      };
      // What bound devices cost Redis with no work (heartbeats, the hosts' blocked fetches): the per-device
      // term of the extrapolation, beside the per-episode one measured below.
      const idleRedisCpuPct = Math.max(0, (await idleCpuPct()) - baselineRedisCpuPct);
      // Not measured: hosts run for hours, and a fresh process's first episodes pay for V8 compiling the hot paths.
      if (warmup > 0) await runCampaign("warmup", warmup);
      const campaignId = "scale";
      const hostsCpu = () => running.reduce((sum, h) => {
        const c = procCpuSplit(h.child.pid);
        return { user: sum.user + c.user, sys: sum.sys + c.sys, mainThread: sum.mainThread + c.mainThread };
      }, { user: 0, sys: 0, mainThread: 0 });
      const cpu0 = await cpuOf();
      const hostCpu0 = hostsCpu();
      const benchCpu0 = process.cpuUsage();
      const t0 = performance.now();
      const st = await runCampaign(campaignId, episodes);
      const wallSec = (performance.now() - t0) / 1000;
      const redisCpuPct = ((await cpuOf()) - cpu0) / wallSec * 100;
      const hostCpu1 = hostsCpu();
      const hostSysSec = hostCpu1.sys - hostCpu0.sys;
      const hostLoopSec = hostCpu1.mainThread - hostCpu0.mainThread;
      const hostCpuSec = hostCpu1.user + hostSysSec - hostCpu0.user;
      const benchCpu = process.cpuUsage(benchCpu0);
      const schedulerCpuPct = ((benchCpu.user + benchCpu.system) / 1e6 / wallSec) * 100;
      const clientsDuring = infoField(await probe.info("clients"), "connected_clients") - clientsBefore;

      // The same burst with nothing behind each job, on the same Redis, while the hosts idle: what BullMQ
      // itself takes to hand out `devices` jobs added at once.
      const floorOf = (burst: boolean) => measureBullmqFloor({ redisUrl: redis.url, prefix, jobs: devices, workers: hosts, batch: ENQUEUE_BATCH, burst });
      const floor = await floorOf(false);
      const burstFloor = await floorOf(true);
      const starts = await campaignStarts({ queue: scheduler.queue, redis: probe, prefix, campaignId, episodes, devices });
      const p99 = starts.all.p99;
      const epsPerSec = st.completed / wallSec;
      const lastOfFirstWave = starts.firstWave.max;
      const b = starts.breakdown;
      const part = (q: Quantiles) => `p50 ${q.p50.toFixed(0)} / p99 ${q.p99.toFixed(0)} ms`;
      out(`farm bench scale: ${devices} FakeDevice-backed devices over ${hosts} worker process(es) (one BullMQ Worker each, at nice ${nice}), one Redis, ${episodes} episodes of ≤${maxSteps} steps (after ${warmup} not measured), ${stepMs} ms per step (± ${jitterPct} %), ${settleMs} ms after each reset step`);
      out(`  campaign: ${st.state}, ${st.completed} completed, ${st.failed} failed, ${st.commits.committed} committed, ${st.commits.duplicatesPrevented} duplicates prevented in ${wallSec.toFixed(1)} s`);
      out(`  redis clients of the hosts: ${clients} when bound, ${clientsDuring} after the campaign (${(clients / hosts).toFixed(1)} per host, ${(clients / devices).toFixed(3)} per device)`);
      out(`  redis cpu: ${redisCpuPct.toFixed(1)} % of one core during the campaign (${((redisCpuPct / 100) / epsPerSec * 1e6).toFixed(0)} µs per episode); ${idleRedisCpuPct.toFixed(2)} % more with the ${devices} devices bound and idle than with none (${((idleRedisCpuPct / 100 / devices) * 1e6).toFixed(2)} µs per device per second; Redis alone: ${baselineRedisCpuPct.toFixed(2)} %)`);
      out(`  worker hosts' cpu: ${((hostCpuSec / wallSec) * 100).toFixed(0)} % of one core in all, ${((hostCpuSec * 1e6) / Math.max(1, st.completed)).toFixed(0)} µs per episode, of which ${((hostSysSec * 1e6) / Math.max(1, st.completed)).toFixed(0)} in the kernel and ${((hostLoopSec * 1e6) / Math.max(1, st.completed)).toFixed(0)} on the event loop's thread (from /proc); the scheduler (this process, with its status polls): ${schedulerCpuPct.toFixed(0)} %`);
      out(`  dispatch (enqueue to start): p50 ${starts.all.p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms over ${starts.all.n} first attempts`);
      out(`    first wave (${starts.firstWave.n} jobs enqueued at once, one per device): p50 ${starts.firstWave.p50.toFixed(1)} ms, last started after ${lastOfFirstWave.toFixed(1)} ms`);
      out(`    after it (${starts.later.n} jobs, each enqueued as an episode ended): p50 ${starts.later.p50.toFixed(1)} ms, p99 ${starts.later.p99.toFixed(1)} ms`);
      out(`    of those, the second half of the campaign (${starts.settled.n} jobs from #${starts.settledFrom}): p50 ${starts.settled.p50.toFixed(1)} ms, p99 ${starts.settled.p99.toFixed(1)} ms`);
      out(`    where it goes (the last ${b.jobs} jobs, whose events Redis still holds): the scheduler's add reaching Redis ${part(b.enqueue)}; queued in Redis until a host fetched it ${part(b.queued)}, of which the host's fetch on its way to Redis ${part(b.fetch)} (the rest: the host's event loop getting to the answer of its blocked fetch)`);
      const floorLine = (f: typeof floor) => `p50 ${f.p50Ms.toFixed(1)} ms, p99 ${f.p99Ms.toFixed(1)} ms, last started after ${f.allStartedMs.toFixed(0)} ms`;
      out(`  the same burst with no episodes, on this Redis (${devices} jobs added at once in batches of ${ENQUEUE_BATCH}, ${hosts} Worker(s) in one process):`);
      out(`    BullMQ's Worker (a round trip per job): ${floorLine(floor)}; the farm's (bursts): ${floorLine(burstFloor)}`);
      out(`first_wave_ms=${lastOfFirstWave.toFixed(1)} steady_start_p99_ms=${starts.later.p99.toFixed(1)} second_half_start_p99_ms=${starts.settled.p99.toFixed(1)} bullmq_alone_start_p99_ms=${floor.p99Ms.toFixed(1)} burst_alone_start_p99_ms=${burstFloor.p99Ms.toFixed(1)}`);
      out(`devices=${devices} hosts=${hosts} redis_clients=${clients} redis_cpu_pct=${redisCpuPct.toFixed(1)} start_p99_ms=${p99.toFixed(1)} episodes_s=${epsPerSec.toFixed(1)} first_wave_ms=${lastOfFirstWave.toFixed(1)} steady_start_p99_ms=${starts.later.p99.toFixed(1)}`);
    } finally {
      for (const c of cleanups.reverse()) await c().catch(() => undefined);
      rmSync(tmp, { recursive: true, force: true });
    }
  },
};
