import { cliConfig } from "../config.ts";
import type { Command } from "commander";
import { parseIntOption } from "./options.ts";
import type { CommandModule } from "./types.ts";
import { coerceError } from "@farm/errors";
import { sleep } from "@farm/time";
import { shQuote } from "@farm/shell-words";

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

type LocalFarm = import("@farm/local-farm").LocalFarm;
type CampaignStatus = import("@farm/scheduler").CampaignStatus;
const say = (line: string) => process.stdout.write(`${line}\n`);

async function runDemo(c: DemoConfig): Promise<void> {
  const path = await import("node:path");
  const { runUntilSignal, untilAborted } = await import("@farm/lifecycle");
  const t0 = performance.now();
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*/, "").replace("T", "-");
  const out = path.resolve(c.out ?? path.join("out", `demo-${stamp}`));
  await runUntilSignal(async (stop) => {
    const farm = await startDemoFarm(c, out);
    try {
      const st = await runCampaign(farm, c, `demo-${stamp}`, stop);
      const committed = await printSummary(farm, c, st, out);
      if (c.keep && !stop.aborted) {
        say(`keeping the farm up until Ctrl-C${farm.worker.envAddress ? ` (remote environments at ${farm.worker.envAddress})` : ""}`);
        await untilAborted(stop);
      }
      if (stop.aborted || st.failed > 0 || committed < c.episodes) process.exitCode = 1;
    } finally {
      await farm.close();
    }
    say(`done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }, { onRepeat: () => say("already shutting down") });
}

/** Redis (private unless REDIS_URL), an adb server, the simulated emulators, a worker and the scheduler. */
async function startDemoFarm(c: DemoConfig, out: string): Promise<LocalFarm> {
  const path = await import("node:path");
  const { fileURLToPath } = await import("node:url");
  const { createLogger } = await import("@farm/log");
  const { startLocalFarm } = await import("@farm/local-farm");
  const config = cliConfig();
  const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
  if (config.redisUrl) say(`redis: ${(await import("@farm/queue")).redactRedisUrl(config.redisUrl)} (REDIS_URL)`);
  const farm = await startLocalFarm({
    devices: c.emulators,
    taskPaths: [path.join(repo, "tasks/classic_2048.textproto")],
    outDir: out,
    // A prefix of its own, so a demo against a shared REDIS_URL never hands jobs to real workers.
    queuePrefix: "{farm-demo}",
    logger: createLogger({ service: "demo", level: config.logLevel ?? "warn" }),
    ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}),
    worker: { episode: { settleMs: c.settleMs }, ...(c.envPort !== undefined ? { envPort: c.envPort } : {}) },
    scheduler: { windowSize: 2 * c.emulators, tickMs: 500 },
    onStarted: (what, detail) => say(what === "devices" ? `emulators: ${c.emulators} simulated (${detail})` : `${what}: ${detail}`),
  });
  const envAddress = farm.worker.envAddress;
  if (envAddress) {
    say(`remote environments: dm_env_rpc v1 at ${envAddress}; from Python:`);
    say(`$ python3 clients/python/examples/remote_env_random.py --target ${envAddress} --task classic_2048 --steps 100 --worlds 2`);
  }
  return farm;
}

/** Submits the campaign and shows progress (a bar on a terminal, a line every few seconds otherwise) until it ends. */
async function runCampaign(farm: LocalFarm, c: DemoConfig, campaignId: string, stop: AbortSignal): Promise<CampaignStatus & { wallSec: number }> {
  const { loadTaskFile } = await import("@farm/task");
  const task = loadTaskFile(farm.worker.config.taskPaths[0]!);
  const submitted = await farm.scheduler.submit({ id: campaignId, taskId: task.task.id, taskHash: task.hash, policy: "random", episodes: c.episodes, options: { maxEpisodeSteps: c.maxEpisodeSteps } });
  say(`campaign ${campaignId}: ${c.episodes} episodes of ${task.task.id} (${task.task.name}), policy random, max ${c.maxEpisodeSteps} steps${submitted.created ? "" : " (already existed)"}`);
  const tty = process.stdout.isTTY === true;
  const tStart = performance.now();
  // Give up when nothing moves for a while (e.g. no device could be bound), rather than wait forever.
  const stallLimitMs = 120_000;
  let lastLine = 0;
  let lastChange = performance.now();
  let lastFinished = -1;
  let st = await farm.scheduler.status(campaignId);
  while (!stop.aborted && st.state === "running") {
    await sleep(tty ? 250 : 500);
    st = await farm.scheduler.status(campaignId);
    if (st.finished !== lastFinished || st.running > 0) {
      lastFinished = st.finished;
      lastChange = performance.now();
    } else if (performance.now() - lastChange > stallLimitMs) {
      say(`${tty ? "\n" : ""}no progress for ${stallLimitMs / 1000} s (devices: ${JSON.stringify(farm.worker.deviceStates())}); giving up — run with FARM_LOG_LEVEL=info to see why`);
      process.exitCode = 1;
      break;
    }
    const secs = (performance.now() - tStart) / 1000;
    if (tty) {
      const filled = Math.round((st.finished / c.episodes) * 30);
      process.stdout.write(`\r[${"#".repeat(filled)}${".".repeat(30 - filled)}] ${st.finished}/${c.episodes} episodes, ${st.running} running, ${secs.toFixed(1)} s `);
    } else if (performance.now() - lastLine > 3000 || st.state !== "running") {
      lastLine = performance.now();
      say(`progress: ${st.finished}/${c.episodes} episodes (${st.completed} completed, ${st.failed} failed, ${st.running} running) after ${secs.toFixed(1)} s`);
    }
  }
  if (tty) process.stdout.write("\n");
  if (stop.aborted) say("interrupted: shutting down");
  return { ...st, wallSec: (performance.now() - tStart) / 1000 };
}

/** The scheduler's counts (from the job results) and what was committed (the Avro files); returns the episodes committed. */
async function printSummary(farm: LocalFarm, c: DemoConfig, st: CampaignStatus & { wallSec: number }, out: string): Promise<number> {
  const path = await import("node:path");
  const { inspectTrajectories, formatSummary } = await import("@farm/trajectory");
  const sum = st.summary;
  const s = await inspectTrajectories([out]).catch(() => undefined);
  const counts = (o: Record<string, number> | undefined) => Object.entries(o ?? {}).map(([k, v]) => `${k} ${v}`).join(", ");
  const failures = counts(sum?.failuresByCode);
  const steps = sum?.totalSteps ?? s?.steps ?? 0;
  const metricsUrl = `${farm.worker.metricsUrl}/metrics`;
  say("");
  say(`summary of campaign ${st.id} (${st.state})`);
  say(`  episodes:     ${st.completed} completed, ${st.failed} failed of ${c.episodes}; by outcome: ${counts(sum?.byOutcome) || "-"}; by cause: ${counts(sum?.byCause) || "-"}${failures ? `; failures: ${failures}` : ""}`);
  say(`  reward:       mean ${sum?.meanReward != null ? sum.meanReward.toFixed(2) : "-"} (min ${s?.reward?.min ?? "-"}, max ${s?.reward?.max ?? "-"})`);
  say(`  speed:        ${steps} steps in ${st.wallSec.toFixed(1)} s = ${(steps / st.wallSec).toFixed(1)} steps/s, ${(st.finished / st.wallSec).toFixed(2)} episodes/s on ${farm.serials.length} emulators`);
  say(`  trajectories: ${out} (${s?.files ?? 0} Avro files, ${s?.uniqueEpisodes ?? 0} episodes, ${s?.duplicates.length ?? 0} duplicates)`);
  say(`  metrics:      ${metricsUrl} (worker and scheduler, served until the demo exits); scraped: ${await scrapeFigures(metricsUrl)}`);
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
  return s?.uniqueEpisodes ?? 0;
}

/** The commands that export the demo's trajectories to Parquet and query them (printed, not run). */
export function exportCommands(trajectories: string): string[] {
  const dataset = `${trajectories.replace(/\/+$/, "")}-parquet`;
  return [
    `npx farm trajectories export --format parquet ${shQuote(trajectories)} --out ${shQuote(dataset)}`,
    `npx farm trajectories query "SELECT task_id, policy_name, count(*) AS episodes, avg(episode_return) AS mean_return, quantile_cont(step_count, [0.5, 0.9]) AS steps_p50_p90 FROM episodes GROUP BY ALL" ${shQuote(dataset)}`,
    `npx farm trajectories query "SELECT goal, count(*) AS episodes, avg((episode_return > 0)::INT) AS success_rate, sum(invalid_actions) / sum(step_count) AS invalid_action_rate FROM episodes GROUP BY goal ORDER BY episodes DESC" ${shQuote(dataset)}`,
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
