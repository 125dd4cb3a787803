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

/** Where a rule finds a site in one file's text: character offsets. */
export type SiteFinder = (text: string) => Iterable<number>;

/**
 * `file:line` (relative to `root`, `/`-separated) of every match of `pattern` (a regex, or a finder giving
 * offsets) in the production sources (libs/*\/src, services/*\/src, loadtest/src) of files `skip` does not
 * name: the "one X" rules.
 */
export function patternSites(root: string, pattern: RegExp | SiteFinder, skip: (rel: string) => boolean): string[] {
  const find: SiteFinder = typeof pattern === "function" ? pattern : regexSites(pattern);
  const files = ["libs", "services"].flatMap((top) => {
    const dir = path.join(root, top);
    return fs.existsSync(dir) ? fs.readdirSync(dir).flatMap((pkg) => sourceFiles(path.join(dir, pkg, "src"))) : [];
  });
  const found: string[] = [];
  for (const file of [...files, ...sourceFiles(path.join(root, "loadtest/src"))]) {
    const rel = path.relative(root, file).split(path.sep).join("/");
    if (skip(rel)) continue;
    const text = fs.readFileSync(file, "utf8");
    for (const at of find(text)) found.push(`${rel}:${text.slice(0, at).split("\n").length}`);
  }
  return found;
}

function regexSites(pattern: RegExp): SiteFinder {
  const global = new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`);
  return (text) => Array.from(text.matchAll(global), (m) => m.index);
}

/**
 * The text between the parenthesis at `open` and the one that closes it (string and template literals and
 * comments skipped, so a parenthesis in a message does not count); to the end of the text when none does.
 */
export function parenthesised(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === "'" || c === '"' || c === "`") {
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === "\\") i++;
    } else if (c === "/" && text[i + 1] === "/") {
      i = text.indexOf("\n", i) < 0 ? text.length : text.indexOf("\n", i);
    } else if (c === "/" && text[i + 1] === "*") {
      i = text.indexOf("*/", i + 2) < 0 ? text.length : text.indexOf("*/", i + 2) + 1;
    } else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return text.slice(open + 1, i);
  }
  return text.slice(open + 1);
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
