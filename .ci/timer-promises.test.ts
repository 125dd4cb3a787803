/**
 * One sleep: a promise around `setTimeout` is written once, in @farm/time (`sleep`, `pollUntil`).
 * Everywhere else waits through it, so a wait can be cancelled by a signal and a reader finds one way.
 * Tests may build their own timers (they probe timing on purpose).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sourceFiles } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** A `new Promise` whose executor arms a timer within the same statement. */
const TIMER_PROMISE = /new Promise\b[^;]{0,200}?\bsetTimeout\(/s;

/** `file:line` of every timer promise outside libs/time. */
export function timerPromises(root: string): string[] {
  const found: string[] = [];
  const files = ["libs", "services"].flatMap((top) => {
    const dir = path.join(root, top);
    return fs.existsSync(dir) ? fs.readdirSync(dir).flatMap((pkg) => sourceFiles(path.join(dir, pkg, "src"))) : [];
  });
  for (const file of [...files, ...sourceFiles(path.join(root, "loadtest/src"))]) {
    const rel = path.relative(root, file).split(path.sep).join("/");
    if (rel.startsWith("libs/time/")) continue;
    const text = fs.readFileSync(file, "utf8");
    for (const m of text.matchAll(new RegExp(TIMER_PROMISE, "gs"))) {
      found.push(`${rel}:${text.slice(0, m.index).split("\n").length}`);
    }
  }
  return found;
}

test("no promise around setTimeout outside @farm/time", () => {
  assert.deepEqual(timerPromises(REPO), [], "wait with sleep(ms, signal) or pollUntil from @farm/time");
});

test("the rule catches an inline sleep, also over two lines", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "timer-rule-"));
  try {
    fs.mkdirSync(path.join(root, "libs/x/src"), { recursive: true });
    fs.mkdirSync(path.join(root, "libs/time/src"), { recursive: true });
    fs.writeFileSync(path.join(root, "libs/x/src/a.ts"), "export async function f() {\n  await new Promise((r) =>\n    setTimeout(r, 10));\n}\n");
    fs.writeFileSync(path.join(root, "libs/time/src/index.ts"), "export const s = () => new Promise((r) => setTimeout(r, 1));\n");
    assert.deepEqual(timerPromises(root), ["libs/x/src/a.ts:2"]);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
