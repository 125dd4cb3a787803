/** The TypeScript files under a folder, and where a pattern stands in them, for the `.ci/` rules that read the sources as text. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Every `.ts` file below `dir` (none when it does not exist), skipping node_modules and, unless asked, test folders. */
export function sourceFiles(dir: string, opts: { withTests?: boolean } = {}): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" || (e.name === "test" && !opts.withTests) ? [] : sourceFiles(p, opts);
    return e.name.endsWith(".ts") ? [p] : [];
  });
}

/**
 * `file:line` (relative to `root`, `/`-separated) of every match of `pattern` in the production sources
 * (libs/*\/src, services/*\/src, loadtest/src) of files `skip` does not name: the "one X" rules.
 */
export function patternSites(root: string, pattern: RegExp, skip: (rel: string) => boolean): string[] {
  const global = new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`);
  const files = ["libs", "services"].flatMap((top) => {
    const dir = path.join(root, top);
    return fs.existsSync(dir) ? fs.readdirSync(dir).flatMap((pkg) => sourceFiles(path.join(dir, pkg, "src"))) : [];
  });
  const found: string[] = [];
  for (const file of [...files, ...sourceFiles(path.join(root, "loadtest/src"))]) {
    const rel = path.relative(root, file).split(path.sep).join("/");
    if (skip(rel)) continue;
    const text = fs.readFileSync(file, "utf8");
    for (const m of text.matchAll(global)) found.push(`${rel}:${text.slice(0, m.index).split("\n").length}`);
  }
  return found;
}

/** Runs `check` on a temporary tree holding `files` (path → text), removed afterwards: a rule shown failing on bad code. */
export function withTree<T>(prefix: string, files: Record<string, string>, check: (root: string) => T): T {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  try {
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      fs.writeFileSync(path.join(root, name), text);
    }
    return check(root);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
