/**
 * One error base: every error class in the farm's sources either extends the FarmError family (stable
 * `code`, `retryable`) or declares `retryable` itself (classes that must extend another base, such as
 * BullMQ's UnrecoverableError, or internal control-flow errors). A new class without it fails here.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sourceFiles } from "./source-files.ts";

const sourcesWithTests = (dir: string): string[] => sourceFiles(dir, { withTests: true });
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

test("every error class has `retryable` (FarmError family or its own field)", () => {
  const files = ["libs", "services", "loadtest"].flatMap((d) => fs.readdirSync(path.join(REPO, d), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => path.join(REPO, d, e.name, "src"))).concat(path.join(REPO, "loadtest/src")).flatMap(sourcesWithTests);
  const classes = new Map<string, { base: string; body: string; where: string }>();
  for (const file of files) {
    const text = fs.readFileSync(file, "utf8");
    for (const m of text.matchAll(/class (\w+)(?:<[^>]*>)? extends (\w+)(?:<[^>]*>)? \{/g)) {
      if (!/Error$|Request$|^Stop$/.test(m[1]!) || !/Error$/.test(m[2]!)) continue;
      // The class body up to the next top-level closing brace.
      const rest = text.slice(m.index! + m[0].length);
      const end = rest.search(/\n\}/);
      classes.set(m[1]!, { base: m[2]!, body: rest.slice(0, end < 0 ? rest.length : end), where: `${path.relative(REPO, file)}` });
    }
  }
  assert.ok(classes.size >= 20, `found only ${classes.size} error classes: the scan is broken`);
  const hasRetryable = (name: string, seen = new Set<string>()): boolean => {
    if (name === "FarmError") return true;
    const c = classes.get(name);
    if (!c || seen.has(name)) return false;
    seen.add(name);
    return /\bretryable\b/.test(c.body) || hasRetryable(c.base, seen);
  };
  const missing = [...classes].filter(([name]) => !hasRetryable(name)).map(([name, c]) => `${name} (${c.where})`);
  assert.deepEqual(missing, [], `error classes without retryable: ${missing.join(", ")}`);
});
