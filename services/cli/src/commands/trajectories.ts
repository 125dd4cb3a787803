import type { Command } from "commander";
import type { CommandModule } from "./types.ts";

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

/** `farm trajectories inspect|reconcile|export`: read the farm's Avro trajectory files (libs/trajectory), check them against the claims. */
export const trajectoriesCommand: CommandModule = {
  register(program: Command) {
    const cmd = program.command("trajectories").description("inspect and export trajectory files (Avro)");

    cmd
      .command("inspect")
      .description("summarise files and folders: counts, outcomes by cause, reward statistics, duplicates, schema versions")
      .argument("<paths...>", "trajectory files or folders (searched recursively for *.avro; temporary files skipped)")
      .option("--json", "print the summary as JSON", false)
      .action(async (paths: string[], opts: { json: boolean }) => {
        const { inspectTrajectories, formatSummary } = await import("@farm/trajectory");
        const summary = await inspectTrajectories(paths);
        process.stdout.write(opts.json ? `${JSON.stringify(summary, null, 2)}\n` : `${formatSummary(summary)}\n`);
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
        const { reconcileFolders, formatReconcile } = await import("@farm/worker");
        const url = opts.redis ?? process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
        const prefix = resolveQueuePrefix(opts.prefix);
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
      .description("print one JSON object per episode (dates ISO-8601, frames base64)")
      .requiredOption("--jsonl", "JSON Lines on stdout (the only format so far)")
      .argument("<paths...>", "trajectory files or folders")
      .action(async (paths: string[]) => {
        const { readTrajectories, episodeToJson } = await import("@farm/trajectory");
        process.stdout.on("error", () => undefined); // EPIPE when the reader stops early: just stop.
        for await (const episode of readTrajectories(paths)) {
          if (!(await writeOut(`${episodeToJson(episode)}\n`))) break;
        }
      });
  },
};
