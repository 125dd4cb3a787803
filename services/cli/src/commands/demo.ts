import type { Command } from "commander";
import type { CommandModule } from "./types.ts";

interface DemoOptions {
  emulators: string;
  episodes: string;
  out?: string;
  maxSteps: string;
  settleMs: string;
}

export interface DemoConfig {
  emulators: number;
  episodes: number;
  maxEpisodeSteps: number;
  settleMs: number;
  out?: string;
}

function intOption(name: string, v: string, min: number, max: number): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer in ${min}..${max}, got '${v}'`);
  return n;
}

/**
 * `farm demo`: the farm's main job on embedded defaults, in one process: a private Redis (unless
 * REDIS_URL is set) and adb server, N simulated emulators, a worker and a scheduler; a campaign of
 * Classic 2048 with the random policy; progress; a summary; everything shut down in reverse order.
 * Output on stdout; the services' logs (warnings and errors only, unless FARM_LOG_LEVEL) on stderr.
 */
export const demoCommand: CommandModule = {
  register(program: Command) {
    program
      .command("demo")
      .description("run a campaign of Classic 2048 with the random policy on simulated emulators, end to end")
      .option("--emulators <n>", "simulated emulators", "4")
      .option("--episodes <m>", "episodes in the campaign", "20")
      .option("--out <folder>", "trajectory folder (default: ./out/demo-<timestamp>)")
      .option("--max-steps <k>", "step limit per episode (the task says 500)", "100")
      .option("--settle-ms <ms>", "wait after each setup/reset step (AndroidEnv: 500)", "100")
      .action(async (o: DemoOptions) => {
        await runDemo({
          emulators: intOption("emulators", o.emulators, 1, 64),
          episodes: intOption("episodes", o.episodes, 1, 100_000),
          maxEpisodeSteps: intOption("max-steps", o.maxSteps, 1, 1_000_000),
          settleMs: intOption("settle-ms", o.settleMs, 0, 60_000),
          ...(o.out ? { out: o.out } : {}),
        });
      });
  },
};

async function runDemo(c: DemoConfig): Promise<void> {
  const path = await import("node:path");
  const { fileURLToPath } = await import("node:url");
  const { createLogger } = await import("@farm/log");
  const { startRedis, startAdbServer } = await import("@farm/local-services");
  const { startSimulatedDevices } = await import("@farm/simulator");
  const { resolveWorkerConfig, WorkerService } = await import("@farm/worker");
  const { inspectTrajectories, formatSummary } = await import("@farm/trajectory");
  const { loadTaskFile } = await import("@farm/task");

  const say = (line: string) => process.stdout.write(`${line}\n`);
  const logger = createLogger({ service: "demo", level: process.env.FARM_LOG_LEVEL ?? "warn" });
  const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
  const taskFile = path.join(repo, "tasks/classic_2048.textproto");
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*/, "").replace("T", "-");
  const out = path.resolve(c.out ?? path.join("out", `demo-${stamp}`));
  const campaignId = `demo-${stamp}`;
  // A prefix of its own, so a demo against a shared REDIS_URL never hands jobs to real workers.
  const queuePrefix = "{farm-demo}";

  const cleanups: Array<{ what: string; run: () => Promise<void> }> = [];
  const cleanup = async () => {
    while (cleanups.length) {
      const c = cleanups.pop()!;
      await c.run().catch((e: unknown) => logger.warn({ event: "demo:cleanup-failed", what: c.what, err: String(e) }, "cleanup failed"));
    }
  };
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const t0 = performance.now();
  try {
    let redisUrl = process.env.REDIS_URL;
    if (redisUrl) say(`redis: ${redisUrl.replace(/\/\/[^@/]*@/, "//***@")} (REDIS_URL)`);
    else {
      const redis = await startRedis();
      cleanups.push({ what: "redis", run: () => redis.stop() });
      redisUrl = redis.url;
      say(`redis: started on port ${redis.port}`);
    }
    const adb = await startAdbServer();
    cleanups.push({ what: "adb server", run: () => adb.stop() });
    say(`adb server: started on port ${adb.port}`);
    const sims = await startSimulatedDevices({ adbPort: adb.port, count: c.emulators });
    cleanups.push({ what: "simulated emulators", run: () => sims.close() });
    const serials = sims.devices.map((d) => d.serial);
    say(`emulators: ${serials.length} simulated (${serials.join(", ")})`);

    const worker = await WorkerService.create(
      resolveWorkerConfig({
        redisUrl,
        queuePrefix,
        adbPort: adb.port,
        devices: serials,
        taskPaths: [taskFile],
        outDir: out,
        metricsPort: 0,
        drainTimeoutMs: 10_000,
        episode: { settleMs: c.settleMs },
      }),
      { logger },
    );
    await worker.start();
    cleanups.push({ what: "worker", run: () => worker.close() });
    say(`worker: binding ${serials.length} devices; /metrics at ${worker.metricsUrl}/metrics`);

    const task = loadTaskFile(taskFile);
    const campaign = await submitDemoCampaign({
      redisUrl,
      queuePrefix,
      taskFile,
      logger,
      input: { id: campaignId, taskId: task.task.id, taskHash: task.hash, policy: "random", episodes: c.episodes, options: { maxEpisodeSteps: c.maxEpisodeSteps } },
    });
    cleanups.push({ what: "scheduler", run: () => campaign.close() });
    say(`campaign ${campaignId}: ${c.episodes} episodes of ${task.task.id} (${task.task.name}), policy random, max ${c.maxEpisodeSteps} steps`);

    // Progress: a bar on a terminal, a line every few seconds otherwise.
    const tty = process.stdout.isTTY === true;
    let lastLine = 0;
    let p = await campaign.progress();
    const tStart = performance.now();
    while (!abort.signal.aborted && p.completed + p.failed < c.episodes) {
      await new Promise((r) => setTimeout(r, tty ? 250 : 500));
      p = await campaign.progress();
      const done = p.completed + p.failed;
      const secs = (performance.now() - tStart) / 1000;
      if (tty) {
        const width = 30;
        const filled = Math.round((done / c.episodes) * width);
        process.stdout.write(`\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${c.episodes} episodes, ${p.running} running, ${secs.toFixed(1)} s `);
      } else if (performance.now() - lastLine > 3000 || done === c.episodes) {
        lastLine = performance.now();
        say(`progress: ${done}/${c.episodes} episodes (${p.completed} completed, ${p.failed} failed, ${p.running} running) after ${secs.toFixed(1)} s`);
      }
    }
    if (tty) process.stdout.write("\n");
    const wallSec = (performance.now() - tStart) / 1000;
    if (abort.signal.aborted) say("interrupted: shutting down");

    // Summary from what was committed (the Avro files), plus the worker's own counters.
    const s = await inspectTrajectories([out]).catch(() => undefined);
    const outcomes = s ? Object.entries(s.outcomes).map(([o, causes]) => `${o} ${Object.values(causes).reduce((a, b) => a + b, 0)} (${Object.entries(causes).map(([k, v]) => `${k} ${v}`).join(", ")})`).join("; ") : "-";
    say("");
    say("summary");
    say(`  episodes:    ${s?.uniqueEpisodes ?? 0} committed of ${c.episodes}${p.failed ? `, ${p.failed} failed` : ""}: ${outcomes || "-"}`);
    say(`  reward:      mean ${s?.reward ? s.reward.mean.toFixed(2) : "-"} (min ${s?.reward?.min ?? "-"}, max ${s?.reward?.max ?? "-"})`);
    say(`  steps:       ${s?.steps ?? 0} in ${wallSec.toFixed(1)} s = ${((s?.steps ?? 0) / wallSec).toFixed(1)} steps/s on ${serials.length} emulators`);
    say(`  trajectories: ${out} (${s?.files ?? 0} Avro files, ${s?.duplicates.length ?? 0} duplicates)`);
    say(`  metrics:     ${worker.metricsUrl}/metrics (until the demo exits)`);
    if (s) {
      say("");
      say(`npx farm trajectories inspect ${path.relative(process.cwd(), out) || "."}`);
      for (const line of formatSummary(s).split("\n")) say(`  ${line}`);
    }
    say("");
    await cleanup();
    say(`done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    if (abort.signal.aborted || p.failed > 0 || (s?.uniqueEpisodes ?? 0) < c.episodes) process.exitCode = 1;
  } finally {
    await cleanup();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

interface DemoCampaign {
  progress(): Promise<{ completed: number; failed: number; running: number }>;
  close(): Promise<void>;
}

interface SubmitArgs {
  redisUrl: string;
  queuePrefix: string;
  taskFile: string;
  logger: import("@farm/log").Logger;
  input: { id: string; taskId: string; taskHash: string; policy: string; episodes: number; options: { maxEpisodeSteps: number } };
}

/** Adds the campaign's episode jobs (deterministic ids, default job options) and reads progress from the queue. */
async function submitDemoCampaign(a: SubmitArgs): Promise<DemoCampaign> {
  const { Queue } = await import("bullmq");
  const q = await import("@farm/queue");
  const queue = new Queue(q.QUEUE_NAMES.episodes, { connection: q.redisConnection(a.redisUrl) as never, prefix: a.queuePrefix });
  const { id, episodes } = a.input;
  await queue.addBulk(
    Array.from({ length: episodes }, (_, i) => ({
      name: "episode",
      data: { v: q.EPISODE_JOB_VERSION, campaignId: id, episodeIndex: i, taskId: a.input.taskId, taskHash: a.input.taskHash, policy: { spec: a.input.policy }, seed: i, options: a.input.options },
      opts: { ...q.defaultEpisodeJobOptions, priority: q.bullPriority(q.DEFAULT_CAMPAIGN_PRIORITY), jobId: q.episodeJobId(id, i) },
    })),
  );
  return {
    async progress() {
      const counts = { completed: 0, failed: 0, running: 0 };
      for (let i = 0; i < episodes; i++) {
        const state = await queue.getJobState(q.episodeJobId(id, i));
        if (state === "completed") counts.completed++;
        else if (state === "failed") counts.failed++;
        else if (state === "active") counts.running++;
      }
      return counts;
    },
    close: () => queue.close(),
  };
}
