import type { Command } from "commander";
import { relative } from "node:path";
import { terminalSafe, terminalSafeJson } from "@farm/terminal-text";
import { collect } from "./options.ts";
import { convertTaskFiles } from "./task-convert.ts";
import type { CommandModule } from "./types.ts";

/** JSON for `task show`: regexes as their Python source, bytes as base64, a family's `map` values as an object. */
function taskJsonReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (value instanceof Map) return Object.fromEntries(value);
  return value; // regexes serialise as their Python source (PyRegex.toJSON)
}

/**
 * `farm task validate <paths...>` and `farm task show <file>`: check and inspect task definitions (libs/task): task
 * files of every dialect and task families (`*.family.yaml`, libs/task/FAMILIES.md; errors at file:line:column).
 */
export const taskCommand: CommandModule = {
  register(program: Command) {
    const task = program.command("task").description("task definitions (AndroidEnv textproto, all three dialects; task families *.family.yaml)");

    task
      .command("validate")
      .description("check task files, task families and folders; prints file:line: message (families: file:line:column) per invalid file, then a count")
      .argument("<paths...>", "task files, *.family.yaml or folders (searched recursively for *.textproto and *.family.yaml)")
      .option("--apk-dir <dir>", "folder to look for APKs in (repeatable)", collect, [])
      .option("-v, --verbose", "also print warnings (to stderr)", false)
      .option("--timing", "print how long loading took (to stderr)", false)
      .action(async (paths: string[], opts: { apkDir: string[]; verbose: boolean; timing: boolean }) => {
        const { loadTaskSet, formatTaskError } = await import("@farm/task");
        const started = performance.now();
        const { tasks, errors } = loadTaskSet(paths, { apkDirs: opts.apkDir });
        const elapsedMs = performance.now() - started;
        for (const e of errors) process.stdout.write(`${formatTaskError(e)}\n`);
        if (opts.verbose) {
          for (const t of tasks) {
            const file = relative(process.cwd(), t.sourcePath) || t.sourcePath;
            for (const w of t.warnings) process.stderr.write(`${terminalSafe(`${file}:${w.line}: warning: ${w.field ? `${w.field}: ` : ""}${w.message}`)}\n`);
          }
        }
        process.stdout.write(`${tasks.length} valid, ${errors.length} invalid\n`);
        if (opts.timing) process.stderr.write(`loaded ${tasks.length + errors.length} files in ${elapsedMs.toFixed(0)} ms\n`);
        if (errors.length > 0) process.exitCode = 1;
      });

    task
      .command("convert")
      .description("write tasks in the current dialect (AndroidEnv 1.3) or the legacy 2021 one; each result is checked to load to the same task hash")
      .requiredOption("--to <dialect>", "current | legacy")
      .option("--out <path>", "output file (one input file) or folder (same layout); without it one file goes to stdout")
      .argument("<paths...>", "task files or folders")
      .action(async (paths: string[], opts: { to: string; out?: string }) => {
        if (opts.to !== "current" && opts.to !== "legacy") {
          process.stderr.write(`farm task convert: --to must be current or legacy, got ${JSON.stringify(opts.to.slice(0, 40))}\n`);
          process.exitCode = 2;
          return;
        }
        process.exitCode = await convertTaskFiles(paths, { to: opts.to, ...(opts.out ? { out: opts.out } : {}) });
      });

    task
      .command("show")
      .description("print the normalised task (with its id, content hash and dialect; a family's parameters, set-up and checks) as JSON")
      .argument("<file>", "task file or *.family.yaml")
      .option("--apk-dir <dir>", "folder to look for APKs in (repeatable)", collect, [])
      .action(async (file: string, opts: { apkDir: string[] }) => {
        const { loadTaskFile, formatTaskError, TaskLoadError } = await import("@farm/task");
        try {
          const loaded = loadTaskFile(file, { apkDirs: opts.apkDir });
          const { task: model, hash, dialect, sourcePath, warnings, family } = loaded;
          process.stdout.write(`${terminalSafeJson(JSON.stringify({ id: model.id, hash, dialect, sourcePath, warnings, ...(family ? { family } : {}), task: model }, taskJsonReplacer, 2))}\n`);
        } catch (e) {
          if (!(e instanceof TaskLoadError)) throw e;
          process.stdout.write(`${formatTaskError(e)}\n`);
          process.exitCode = 1;
        }
      });
  },
};
