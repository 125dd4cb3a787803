/**
 * One sleep: a promise around `setTimeout` is written once, in @farm/time (`sleep`, `pollUntil`).
 * Everywhere else waits through it, so a wait can be cancelled by a signal and a reader finds one way.
 * Tests may build their own timers (they probe timing on purpose).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { patternSites, withTree } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** A `new Promise` whose executor arms a timer within the same statement. */
const TIMER_PROMISE = /new Promise\b[^;]{0,200}?\bsetTimeout\(/s;

/** `file:line` of every timer promise outside libs/time. */
export function timerPromises(root: string): string[] {
  return patternSites(root, TIMER_PROMISE, (rel) => rel.startsWith("libs/time/"));
}

test("no promise around setTimeout outside @farm/time", () => {
  assert.deepEqual(timerPromises(REPO), [], "wait with sleep(ms, signal) or pollUntil from @farm/time");
});

test("the rule catches an inline sleep, also over two lines", () => {
  withTree("timer-rule-", {
    "libs/x/src/a.ts": "export async function f() {\n  await new Promise((r) =>\n    setTimeout(r, 10));\n}\n",
    "libs/time/src/index.ts": "export const s = () => new Promise((r) => setTimeout(r, 1));\n",
  }, (root) => {
    assert.deepEqual(timerPromises(root), ["libs/x/src/a.ts:2"]);
  });
});
