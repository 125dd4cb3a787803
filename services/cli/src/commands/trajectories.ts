import { cliConfig } from "../config.ts";
import type { Command } from "commander";
import type { CommandModule } from "./types.ts";
import { registerViewCommand } from "./view.ts";
import { coerceError } from "@farm/errors";
import { terminalSafe, terminalSafeJson } from "@farm/terminal-text";

/** Writes to stdout honouring its backpressure; false once the reader went away (e.g. `| head`). */
async function writeOut(text: string): Promise<boolean> {
  if (process.stdout.destroyed) return false;
  if (process.stdout.write(text)) return true;
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      process.stdout.off("drain", onDrain);
      process.stdout.off("error", onError);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onError = () => done(false);
    process.stdout.once("drain", onDrain);
    process.stdout.once("error", onError);
  });
}

/**
 * `farm trajectories inspect|reconcile|export|query`: the farm's Avro trajectory files (libs/trajectory),
 * checked against the farm-wide commit claims (reconcile), and Parquet data sets (libs/dataset).
 */
export const trajectoriesCommand: CommandModule = {
  register(program: Command) {
    const cmd = program.command("trajectories").description("inspect and export trajectory files (Avro)");

    cmd
      .command("inspect")
      .description("summarise files and folders: counts, outcomes by cause, reward statistics, duplicates, schema versions; goals, agent statuses, answers and invalid actions of agent episodes")
      .argument("<paths...>", "trajectory files or folders (searched recursively for *.avro; temporary files skipped)")
      .option("--json", "print the summary as JSON", false)
      .action(async (paths: string[], opts: { json: boolean }) => {
        const { inspectTrajectories, formatSummary } = await import("@farm/trajectory");
        const summary = await inspectTrajectories(paths, cliConfig().trajectoryRead);
        process.stdout.write(opts.json ? `${terminalSafeJson(JSON.stringify(summary, null, 2))}\n` : `${formatSummary(summary)}\n`);
        if (summary.unreadable.length > 0) process.exitCode = 1;
      });

    cmd
      .command("reconcile")
      .description("check folders (one per host, or a shared one) against the farm-wide claims of a campaign: lists missing and extra files; exit 1 when any")
      .argument("<folders...>", "trajectory folders of every host")
      .requiredOption("--campaign <id>", "campaign id")
      .option("--redis <url>", "Redis URL (default: REDIS_URL or redis://127.0.0.1:6379)")
      .option("--prefix <prefix>", "queue prefix (default: FARM_QUEUE_PREFIX or {farm})")
      .option("--quarantine", "move extra files whose episode is committed by another file into <folder>/.quarantine/", false)
      .option("--json", "print the report as JSON", false)
      .action(async (folders: string[], opts: { campaign: string; redis?: string; prefix?: string; quarantine: boolean; json: boolean }) => {
        const { RedisCommitArbiter, campaignKeys, checkRedisAccess, createRedisClient, resolveQueuePrefix, DEFAULT_REDIS_URL } = await import("@farm/queue");
        const { reconcileFolders, formatReconcile } = await import("@farm/worker/reconcile");
        const url = opts.redis ?? cliConfig().redisUrl ?? DEFAULT_REDIS_URL;
        const prefix = resolveQueuePrefix(opts.prefix ?? cliConfig().queuePrefix);
        const redis = createRedisClient(url);
        try {
          await checkRedisAccess(redis, url, prefix);
          const episodes = await redis.hget(campaignKeys(prefix, opts.campaign).record, "episodes");
          const report = await reconcileFolders({
            folders,
            campaignId: opts.campaign,
            arbiter: new RedisCommitArbiter(redis, prefix),
            ...(episodes !== null ? { episodes: Number(episodes) } : {}),
            quarantine: opts.quarantine,
          });
          process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReconcile(report)}\n`);
          const open = report.missing.length + report.extra.filter((e) => !e.quarantined).length + report.unreadable.length;
          if (open > 0) process.exitCode = 1;
        } finally {
          redis.disconnect();
        }
      });

    cmd
      .command("export")
      .description("JSON Lines on stdout (--jsonl), or a Hugging Face data set folder of Parquet shards (--format parquet --out DIR)")
      .argument("<paths...>", "trajectory files or folders")
      .option("--jsonl", "JSON Lines on stdout: one object per episode (dates ISO-8601, frames base64); same as --format jsonl", false)
      .option("--format <format>", "jsonl | parquet")
      .option("--out <dir>", "parquet: the data set folder (created; must be empty or, with --incremental, a data set)")
      .option("--shard-mb <mb>", "parquet: maximum size of one shard in MB (10^6 bytes)", "100")
      .option("--compression <codec>", "parquet: zstd | snappy | none", "zstd")
      .option("--layout <layout>", "parquet: steps (one row per step) | episodes-nested (one row per episode, steps as lists: AndroidControl's shape)", "steps")
      .option("--incremental", "parquet: add only episodes the folder's manifest does not hold yet", false)
      .option("--json", "parquet: print the export report as JSON", false)
      .action(async (paths: string[], opts: ExportOpts) => {
        const format = opts.format ?? (opts.jsonl ? "jsonl" : undefined);
        if (format === "jsonl") return exportJsonl(paths);
        if (format !== "parquet") throw new Error(`--format must be jsonl or parquet (or pass --jsonl), got ${JSON.stringify(format ?? "")}`);
        await exportParquetCommand(paths, opts);
      });

    cmd
      .command("follow")
      .description("print a campaign's committed episodes as NDJSON as they commit (Redis Streams consumer group): pending entries of this consumer first, then new ones; each line is acknowledged once printed")
      .argument("<campaign>", "campaign id")
      .requiredOption("--consumer <name>", "this consumer's name in its group (a restart with the same name resumes with its unacknowledged entries)")
      .option("--group <name>", "consumer group: each committed episode reaches each group once", "default")
      .option("--count <n>", "stop after N entries")
      .option("--until-finished", "stop once the campaign is finished and every entry was read", false)
      .option("--redis <url>", "Redis URL (default: REDIS_URL or redis://127.0.0.1:6379)")
      .option("--prefix <prefix>", "queue prefix (default: FARM_QUEUE_PREFIX or {farm})")
      .action(async (campaign: string, opts: { consumer: string; group: string; count?: string; untilFinished: boolean; redis?: string; prefix?: string }) => {
        await followCommand(campaign, opts);
      });

    registerViewCommand(cmd);
    cmd
      .command("query")
      .description("SQL over an exported Parquet data set with DuckDB: tables `steps` (`trajectories` in the episodes-nested layout) and `episodes`")
      .argument("<sql>", "the query, e.g. \"SELECT task_id, policy_name, avg(episode_return) FROM episodes GROUP BY ALL\"")
      .argument("<dir>", "a folder written by `farm trajectories export --format parquet`")
      .option("--json", "print the rows as JSON Lines", false)
      .action(async (sql: string, dir: string, opts: { json: boolean }) => {
        const { queryDataset, formatTable } = await import("@farm/dataset");
        const result = await queryDataset(dir, sql);
        if (opts.json) for (const row of result.rows) process.stdout.write(`${JSON.stringify(row)}\n`);
        else process.stdout.write(`${formatTable(result)}\n`);
      });
  },
};

interface ExportOpts {
  jsonl: boolean;
  format?: string;
  out?: string;
  shardMb: string;
  compression: string;
  incremental: boolean;
  layout: string;
  json: boolean;
}

async function exportJsonl(paths: string[]): Promise<void> {
  const { listTrajectoryFiles, openTrajectoryFile, episodeToJson } = await import("@farm/trajectory");
  process.stdout.on("error", () => undefined); // EPIPE when the reader stops early: just stop.
  const { files } = await listTrajectoryFiles(paths);
  // A bad file is named on stderr and skipped (its episodes before the damage are already out);
  // the other files are still exported and the exit code says something was wrong.
  const bad: string[] = [];
  for (const file of files) {
    try {
      const opened = await openTrajectoryFile(file, cliConfig().trajectoryRead);
      for await (const episode of opened.episodes) {
        if (!(await writeOut(`${episodeToJson(episode)}\n`))) return;
      }
    } catch (err) {
      const msg = coerceError(err).message;
      bad.push(file);
      process.stderr.write(`farm trajectories export: ${terminalSafe(msg.startsWith(file) ? msg : `${file}: ${msg}`)}; skipping the rest of this file\n`);
    }
  }
  if (bad.length > 0) {
    process.stderr.write(`farm trajectories export: ${bad.length} of ${files.length} files unreadable\n`);
    process.exitCode = 1;
  }
}

async function exportParquetCommand(paths: string[], opts: ExportOpts): Promise<void> {
  if (!opts.out) throw new Error("--format parquet needs --out <dir>");
  const shardMb = Number(opts.shardMb);
  if (!Number.isFinite(shardMb) || shardMb < 1) throw new Error(`--shard-mb must be a number >= 1, got ${JSON.stringify(opts.shardMb)}`);
  if (!["zstd", "snappy", "none"].includes(opts.compression)) throw new Error(`--compression must be zstd, snappy or none, got ${JSON.stringify(opts.compression)}`);
  const { exportParquet, formatExportReport, DATASET_LAYOUTS } = await import("@farm/dataset");
  const layout = DATASET_LAYOUTS.find((l) => l === opts.layout);
  if (!layout) throw new Error(`--layout must be ${DATASET_LAYOUTS.join(" or ")}, got ${JSON.stringify(opts.layout)}`);
  const report = await exportParquet(paths, opts.out, {
    shardBytes: Math.floor(shardMb * 1e6),
    compression: opts.compression as "zstd" | "snappy" | "none",
    incremental: opts.incremental,
    layout,
    ...cliConfig().trajectoryRead,
  });
  process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatExportReport(report)}\n`);
  // One structured log line (stderr) with the run's figures.
  const { createLogger } = await import("@farm/log");
  createLogger({ service: "farm-export", ...(cliConfig().logLevel ? { level: cliConfig().logLevel } : {}) }).info(
    { format: "parquet", layout, out: opts.out, episodes: report.episodes, steps: report.steps, shards: report.shardsWritten, bytes: report.bytesWritten, skippedFiles: report.corruptFiles.length, skippedEpisodes: report.invalidEpisodes.length, seconds: Number(report.seconds.toFixed(3)), peakRssMb: Math.round(report.peakRssMb) },
    "trajectories exported",
  );
  if (report.corruptFiles.length > 0 || report.invalidEpisodes.length > 0) process.exitCode = 2;
}

async function followCommand(campaign: string, opts: { consumer: string; group: string; count?: string; untilFinished: boolean; redis?: string; prefix?: string }): Promise<void> {
  const { EpisodeStreamConsumer, STREAM_NAME_PATTERN, CAMPAIGN_ID_PATTERN, campaignKeys, checkRedisAccess, createRedisClient, resolveQueuePrefix, DEFAULT_REDIS_URL } = await import("@farm/queue");
  const { runUntilSignal } = await import("@farm/lifecycle");
  if (!CAMPAIGN_ID_PATTERN.test(campaign)) throw new Error(`campaign ${JSON.stringify(campaign.slice(0, 80))}: 1-64 letters, digits, '_', '.', '-'`);
  for (const [flag, v] of [["--consumer", opts.consumer], ["--group", opts.group]] as const) {
    if (!STREAM_NAME_PATTERN.test(v)) throw new Error(`${flag} ${JSON.stringify(v.slice(0, 80))}: 1-64 letters, digits, '_', '.', ':', '-', starting with a letter or digit`);
  }
  const max = opts.count === undefined ? Infinity : Number(opts.count);
  if (!(max >= 1) || !Number.isInteger(max) && max !== Infinity) throw new Error(`--count must be a positive integer, got ${JSON.stringify(opts.count)}`);
  const url = opts.redis ?? cliConfig().redisUrl ?? DEFAULT_REDIS_URL;
  const prefix = resolveQueuePrefix(opts.prefix ?? cliConfig().queuePrefix);
  const redis = createRedisClient(url);
  process.stdout.on("error", () => undefined);
  try {
    await checkRedisAccess(redis, url, prefix);
    const consumer = EpisodeStreamConsumer.forCampaign(redis, prefix, campaign, opts.group, opts.consumer);
    const record = campaignKeys(prefix, campaign).record;
    let printed = 0;
    await runUntilSignal(async (signal) => {
      while (!signal.aborted && printed < max) {
        // Whether the campaign had finished before this read: then an empty read means nothing more will come.
        const finished = opts.untilFinished && ["completed", "failed", "cancelled"].includes((await redis.hget(record, "state")) ?? "");
        const entries = await consumer.read(Math.min(100, max - printed), finished ? 0 : 1000);
        if (entries.length === 0 && finished) break;
        for (const e of entries) {
          if (!(await writeOut(`${terminalSafeJson(JSON.stringify({ id: e.id, ...(e.message ?? { invalid: true }) }))}\n`))) return;
          // Acknowledged once printed: a restart resumes after it (a kill between the two repeats this one entry, same id).
          await consumer.ack([e.id]);
          printed++;
        }
      }
    });
  } finally {
    redis.disconnect();
  }
}
