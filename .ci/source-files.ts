/** The TypeScript files under a folder, for the `.ci/` rules that read the sources as text. */
import fs from "node:fs";
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
