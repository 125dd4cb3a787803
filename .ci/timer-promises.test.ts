/**
 * One sleep: a promise around `setTimeout` is written once, in @farm/time (`sleep`, `pollUntil`).
 * Everywhere else waits through it, so a wait can be cancelled by a signal and a reader finds one way.
 * Tests may build their own timers (they probe timing on purpose).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parenthesised, patternSites, withTree, type SiteFinder } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** A `new Promise` whose executor (its whole argument list, however many statements) arms a timer. */
const timerPromise: SiteFinder = function* (text) {
  for (const m of text.matchAll(/\bnew Promise\b(?:<[^(]*>)?\s*\(/g)) {
    const open = m.index + m[0].length - 1;
    if (/\bsetTimeout\s*\(/.test(parenthesised(text, open))) yield m.index;
  }
};

/**
 * Files whose promise waits for I/O it owns, with a timer that ends that I/O (destroys its socket, kills its
 * child, shuts its server down, flushes its batch): the promise settles from the I/O, not from a wait.
 */
const IO_TIMERS = new Set([
  "libs/adb-wire/src/host.ts", // an adb server request: the timer destroys the socket
  "libs/adb/src/framebuffer-socket.ts", // a framebuffer read: the timer destroys the socket
  "libs/simulator/src/testing.ts", // adbCli: the timer kills the adb child
  "libs/simulator/src/grpc/emulator-grpc-server.ts", // close: the timer forces the server's shutdown
  "libs/policy/src/http-batcher.ts", // the batch window: the timer flushes the batch
  "loadtest/src/farm-process.ts", // a farm child's exit: the timer restarts it
]);

/** `file:line` of every timer promise outside libs/time (and the I/O timers above). */
export function timerPromises(root: string): string[] {
  return patternSites(root, timerPromise, (rel) => rel.startsWith("libs/time/") || IO_TIMERS.has(rel));
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

test("the rule catches a timer armed statements into the executor, past a string with a parenthesis", () => {
  withTree("timer-rule-", {
    // the shapes the old one-statement rule let through (episode/src/deadline.ts, adb/src/client.ts, …)
    "libs/x/src/deadline.ts": [
      "export function race<T>(work: Promise<T>, ms: number): Promise<T | undefined> {",
      "  return new Promise<T | undefined>((resolve) => {",
      "    let settled = false;",
      "    const t = setTimeout(() => resolve(undefined), ms);",
      "    work.then((v) => { clearTimeout(t); resolve(v); });",
      "  });",
      "}",
      "",
    ].join("\n"),
    "services/y/src/wait.ts": [
      "export const waitOnline = (add: (f: () => void) => void) =>",
      "  new Promise<void>((resolve, reject) => {",
      "    const done = () => { clearTimeout(timer); resolve(); };",
      "    const timer = setTimeout(() => reject(new Error(\"no device (adb server on port 5037?\")), 10);",
      "    add(done);",
      "  });",
      "",
    ].join("\n"),
    // a promise without a timer, and a timer outside any promise, are fine
    "libs/x/src/ok.ts": "export const p = new Promise<void>((r) => { r(); });\nexport const t = setTimeout(() => undefined, 1);\n",
  }, (root) => {
    assert.deepEqual(timerPromises(root).sort(), ["libs/x/src/deadline.ts:2", "services/y/src/wait.ts:2"]);
  });
});
