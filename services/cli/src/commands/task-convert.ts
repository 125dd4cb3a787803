/**
 * `farm task convert --to current|legacy <file|dir…> [--out FILE|DIR]`: writes tasks in the other dialect
 * (libs/task `taskToText`) and checks each written text loads to the same task hash before writing it.
 * One file without --out prints to stdout; folders need --out (the same relative layout is written there).
 * One line per file (`src -> dst hash=<12 hex>`) on stderr, `file: message` for a file that cannot be
 * converted; exit code 1 if any could not.
 */
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { TargetDialect } from "@farm/task";
import { terminalSafe } from "@farm/terminal-text";

export interface ConvertOptions {
  to: TargetDialect;
  out?: string;
}

export async function convertTaskFiles(paths: string[], opts: ConvertOptions): Promise<number> {
  const { expandTaskPaths, loadTaskFile, parseTaskText, taskToText, TaskConvertError, TaskLoadError, formatTaskError, isFamilyPath } = await import("@farm/task");
  const isDir = (p: string) => {
    try {
      return statSync(p).isDirectory();
    } catch {
      return false;
    }
  };
  const files = expandTaskPaths(paths, { families: false });
  const single = files.length === 1 && !isDir(paths[0]!);
  if (!single && !opts.out) {
    process.stderr.write("farm task convert: several files need --out DIR (one file without --out goes to stdout)\n");
    return 2;
  }
  let failed = 0;
  for (const file of files) {
    const root = paths.find((p) => isDir(p) && path.resolve(file).startsWith(path.resolve(p) + path.sep));
    const dest = !opts.out ? undefined : single && !isDir(opts.out) ? opts.out : path.join(opts.out, root ? path.relative(root, file) : path.basename(file));
    try {
      if (isFamilyPath(file)) throw new TaskConvertError("a task family (FAMILIES.md) is not converted; convert the task file it refers to");
      const loaded = loadTaskFile(file);
      const header = `converted by farm task convert --to ${opts.to} from ${path.basename(file)} (${loaded.dialect} dialect); task hash ${loaded.hash}`;
      const text = taskToText(loaded.task, opts.to, header);
      // What is written must be the same task: same content hash, from the place it is written to.
      const back = parseTaskText(text, { sourcePath: dest ? path.resolve(dest) : path.resolve(file) });
      if (back.hash !== loaded.hash) throw new TaskConvertError(`the converted text loads to hash ${back.hash.slice(0, 12)}, not ${loaded.hash.slice(0, 12)}; please report this task`);
      if (!dest) process.stdout.write(text);
      else {
        mkdirSync(path.dirname(dest), { recursive: true });
        writeFileSync(dest, text);
      }
      process.stderr.write(`${terminalSafe(`${file} -> ${dest ?? "stdout"} hash=${loaded.hash.slice(0, 12)} (${loaded.dialect} -> ${back.dialect})`)}\n`);
    } catch (e) {
      failed++;
      if (e instanceof TaskLoadError) process.stderr.write(`${formatTaskError(e)}\n`);
      else if (e instanceof TaskConvertError) process.stderr.write(`${terminalSafe(`${file}: ${e.message}`)}\n`);
      else throw e;
    }
  }
  if (files.length > 1) process.stderr.write(`${files.length - failed} converted, ${failed} not\n`);
  return failed > 0 ? 1 : 0;
}
