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

/** `farm trajectories inspect|export`: read the farm's Avro trajectory files (libs/trajectory). */
export const trajectoriesCommand: CommandModule = {
  register(program: Command) {
    const cmd = program.command("trajectories").description("inspect and export trajectory files (Avro)");

    cmd
      .command("inspect")
      .description("summarise files and folders: counts, outcomes by cause, reward statistics, duplicates, schema versions")
      .argument("<paths...>", "trajectory files or folders (searched recursively for *.avro; temporary files skipped)")
      .option("--json", "print the summary as JSON", false)
      .action(async (paths: string[], opts: { json: boolean }) => {
        const { inspectTrajectories, formatSummary, terminalSafeJson } = await import("@farm/trajectory");
        const summary = await inspectTrajectories(paths);
        process.stdout.write(opts.json ? `${terminalSafeJson(JSON.stringify(summary, null, 2))}\n` : `${formatSummary(summary)}\n`);
        if (summary.unreadable.length > 0) process.exitCode = 1;
      });

    cmd
      .command("export")
      .description("print one JSON object per episode (dates ISO-8601, frames base64)")
      .requiredOption("--jsonl", "JSON Lines on stdout (the only format so far)")
      .argument("<paths...>", "trajectory files or folders")
      .action(async (paths: string[]) => {
        const { listTrajectoryFiles, openTrajectoryFile, episodeToJson, escapeControl } = await import("@farm/trajectory");
        process.stdout.on("error", () => undefined); // EPIPE when the reader stops early: just stop.
        const { files } = await listTrajectoryFiles(paths);
        // A bad file is named on stderr and skipped (its episodes before the damage are already out);
        // the other files are still exported and the exit code says something was wrong.
        const bad: string[] = [];
        for (const file of files) {
          try {
            const opened = await openTrajectoryFile(file);
            for await (const episode of opened.episodes) {
              if (!(await writeOut(`${episodeToJson(episode)}\n`))) return;
            }
          } catch (err) {
            const msg = (err as Error).message;
            bad.push(file);
            process.stderr.write(`farm trajectories export: ${escapeControl(msg.startsWith(file) ? msg : `${file}: ${msg}`)}; skipping the rest of this file\n`);
          }
        }
        if (bad.length > 0) {
          process.stderr.write(`farm trajectories export: ${bad.length} of ${files.length} files unreadable\n`);
          process.exitCode = 1;
        }
      });
  },
};
