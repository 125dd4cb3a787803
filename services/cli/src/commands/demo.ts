import { cliConfig } from "../config.ts";
import type { Command } from "commander";
import { parseIntOption } from "./options.ts";
import type { CommandModule } from "./types.ts";
import { coerceError } from "@farm/errors";

interface DemoOptions {
  emulators: string;
  episodes: string;
  out?: string;
  maxSteps: string;
  settleMs: string;
  envPort?: string;
  keep?: boolean;
}

export interface DemoConfig {
  emulators: number;
  episodes: number;
  maxEpisodeSteps: number;
  settleMs: number;
  out?: string;
  /** Serve remote environments (dm_env_rpc) from the worker on this port. */
  envPort?: number;
  /** After the summary, keep the farm up until Ctrl-C. */
  keep?: boolean;
}

function intOption(name: string, v: string, min: number, max: number): number {
  return parseIntOption(name, v, min, max)!;
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
      .option("--env-port <port>", "serve remote environments (dm_env_rpc v1) from the worker on this port (0 = a free one)")
      .option("--keep", "after the summary, keep the farm up until Ctrl-C (for trying remote environments from Python)")
      .action(async (o: DemoOptions) => {
        await runDemo({
          emulators: intOption("emulators", o.emulators, 1, 64),
          episodes: intOption("episodes", o.episodes, 1, 100_000),
          maxEpisodeSteps: intOption("max-steps", o.maxSteps, 1, 1_000_000),
          settleMs: intOption("settle-ms", o.settleMs, 0, 60_000),
          ...(o.out ? { out: o.out } : {}),
          ...(o.envPort !== undefined ? { envPort: intOption("env-port", o.envPort, 0, 65_535) } : {}),
          ...(o.keep ? { keep: true } : {}),
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
  const { Scheduler } = await import("@farm/scheduler");
  const { inspectTrajectories, formatSummary } = await import("@farm/trajectory");
  const { loadTaskFile } = await import("@farm/task");

  const say = (line: string) => process.stdout.write(`${line}\n`);
  const logger = createLogger({ service: "demo", level: cliConfig().logLevel ?? "warn" });
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
    let redisUrl = cliConfig().redisUrl;
    if (redisUrl) say(`redis: ${(await import("@farm/queue")).redactRedisUrl(redisUrl)} (REDIS_URL)`);
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
        ...(c.envPort !== undefined ? { envPort: c.envPort } : {}),
      }),
      { logger },
    );
    await worker.start();
    cleanups.push({ what: "worker", run: () => worker.close() });
    say(`worker: binding ${serials.length} devices; /metrics at ${worker.metricsUrl}/metrics`);
    if (worker.envAddress) {
      say(`remote environments: dm_env_rpc v1 at ${worker.envAddress}; from Python:`);
      say(`$ python3 clients/python/examples/remote_env_random.py --target ${worker.envAddress} --task classic_2048 --steps 100 --worlds 2`);
    }

    // The scheduler: campaigns in, episode jobs out (windowed), progress counted from the job results.
    const scheduler = await Scheduler.create({ redisUrl, prefix: queuePrefix, taskPaths: [taskFile], windowSize: 2 * serials.length, tickMs: 500, log: logger, metrics: worker.metrics });
    await scheduler.start();
    cleanups.push({ what: "scheduler", run: () => scheduler.close() });
    const task = loadTaskFile(taskFile);
    const submitted = await scheduler.submit({ id: campaignId, taskId: task.task.id, taskHash: task.hash, policy: "random", episodes: c.episodes, options: { maxEpisodeSteps: c.maxEpisodeSteps } });
    say(`campaign ${campaignId}: ${c.episodes} episodes of ${task.task.id} (${task.task.name}), policy random, max ${c.maxEpisodeSteps} steps${submitted.created ? "" : " (already existed)"}`);

    // Progress: a bar on a terminal, a line every few seconds otherwise.
    const tty = process.stdout.isTTY === true;
    let lastLine = 0;
    let st = await scheduler.status(campaignId);
    const tStart = performance.now();
    // Give up when nothing moves for a while (e.g. no device could be bound), rather than wait forever.
    const stallLimitMs = 120_000;
    let lastChange = performance.now();
    let lastFinished = -1;
    while (!abort.signal.aborted && st.state === "running") {
      await new Promise((r) => setTimeout(r, tty ? 250 : 500));
      st = await scheduler.status(campaignId);
      if (st.finished !== lastFinished || st.running > 0) {
        lastFinished = st.finished;
        lastChange = performance.now();
      } else if (performance.now() - lastChange > stallLimitMs) {
        say(`${tty ? "\n" : ""}no progress for ${stallLimitMs / 1000} s (devices: ${JSON.stringify(worker.deviceStates())}); giving up — run with FARM_LOG_LEVEL=info to see why`);
        abort.abort();
        break;
      }
      const secs = (performance.now() - tStart) / 1000;
      if (tty) {
        const width = 30;
        const filled = Math.round((st.finished / c.episodes) * width);
        process.stdout.write(`\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${st.finished}/${c.episodes} episodes, ${st.running} running, ${secs.toFixed(1)} s `);
      } else if (performance.now() - lastLine > 3000 || st.state !== "running") {
        lastLine = performance.now();
        say(`progress: ${st.finished}/${c.episodes} episodes (${st.completed} completed, ${st.failed} failed, ${st.running} running) after ${secs.toFixed(1)} s`);
      }
    }
    if (tty) process.stdout.write("\n");
    const wallSec = (performance.now() - tStart) / 1000;
    if (abort.signal.aborted) say("interrupted: shutting down");

    // Summary: the scheduler's counts (from the job results) and what was committed (the Avro files).
    const sum = st.summary;
    const s = await inspectTrajectories([out]).catch(() => undefined);
    const byOutcome = Object.entries(sum?.byOutcome ?? {}).map(([k, v]) => `${k} ${v}`).join(", ") || "-";
    const byCause = Object.entries(sum?.byCause ?? {}).map(([k, v]) => `${k} ${v}`).join(", ") || "-";
    const failures = Object.entries(sum?.failuresByCode ?? {}).map(([k, v]) => `${k} ${v}`).join(", ");
    const steps = sum?.totalSteps ?? s?.steps ?? 0;
    say("");
    say(`summary of campaign ${campaignId} (${st.state})`);
    say(`  episodes:     ${st.completed} completed, ${st.failed} failed of ${c.episodes}; by outcome: ${byOutcome}; by cause: ${byCause}${failures ? `; failures: ${failures}` : ""}`);
    say(`  reward:       mean ${sum?.meanReward != null ? sum.meanReward.toFixed(2) : "-"} (min ${s?.reward?.min ?? "-"}, max ${s?.reward?.max ?? "-"})`);
    say(`  speed:        ${steps} steps in ${wallSec.toFixed(1)} s = ${(steps / wallSec).toFixed(1)} steps/s, ${(st.finished / wallSec).toFixed(2)} episodes/s on ${serials.length} emulators`);
    say(`  trajectories: ${out} (${s?.files ?? 0} Avro files, ${s?.uniqueEpisodes ?? 0} episodes, ${s?.duplicates.length ?? 0} duplicates)`);
    say(`  metrics:      ${worker.metricsUrl}/metrics (worker and scheduler, served until the demo exits); scraped: ${await scrapeFigures(`${worker.metricsUrl}/metrics`)}`);
    if (s) {
      say("");
      const rel = path.relative(process.cwd(), out);
      const shown = rel && !rel.startsWith("..") ? rel : out;
      say(`$ npx farm trajectories inspect ${shown}`);
      for (const line of formatSummary(s).split("\n")) say(`  ${line}`);
      say("");
      say("export this run as a Hugging Face data set (Parquet) and query it with SQL:");
      for (const line of exportCommands(shown)) say(`$ ${line}`);
    }
    say("");
    if (c.keep && !abort.signal.aborted) {
      say(`keeping the farm up until Ctrl-C${worker.envAddress ? ` (remote environments at ${worker.envAddress})` : ""}`);
      await new Promise<void>((resolve) => abort.signal.addEventListener("abort", () => resolve(), { once: true }));
    }
    await cleanup();
    say(`done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    if (abort.signal.aborted || st.failed > 0 || (s?.uniqueEpisodes ?? 0) < c.episodes) process.exitCode = 1;
  } finally {
    await cleanup();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** The commands that export the demo's trajectories to Parquet and query them (printed, not run). */
export function exportCommands(trajectories: string): string[] {
  const q = (a: string) => (/^[\w./:=-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`);
  const dataset = `${trajectories.replace(/\/+$/, "")}-parquet`;
  return [
    `npx farm trajectories export --format parquet ${q(trajectories)} --out ${q(dataset)}`,
    `npx farm trajectories query "SELECT task_id, policy_name, count(*) AS episodes, avg(episode_return) AS mean_return, quantile_cont(step_count, [0.5, 0.9]) AS steps_p50_p90 FROM episodes GROUP BY ALL" ${q(dataset)}`,
  ];
}

/** A few counters from one scrape of /metrics, summed over their labels. */
async function scrapeFigures(url: string): Promise<string> {
  try {
    const text = await (await fetch(url)).text();
    const sum = (name: string) =>
      text
        .split("\n")
        .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
        .reduce((a, l) => a + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
    return ["farm_episodes_total", "farm_steps_total", "farm_trajectory_files_total", "farm_adb_calls_total"].map((n) => `${n}=${sum(n)}`).join(" ");
  } catch (e) {
    return `scrape failed: ${coerceError(e).message}`;
  }
}
