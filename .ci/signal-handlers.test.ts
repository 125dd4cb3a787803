/**
 * One lifecycle: a process reacts to SIGTERM/SIGINT through `runUntilSignal` (@farm/lifecycle: the first signal
 * drains, a second exits at once), never through its own `process.on("SIGINT", …)`. Tests may send and catch
 * signals as they need.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { patternSites, withTree } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** A listener for a named signal on `process`. */
const SIGNAL_LISTENER = /\bprocess\.(?:on|once|addListener|prependListener|prependOnceListener)\(\s*["'`]SIG/;

/** `file:line` of every hand-made signal handler outside libs/lifecycle. */
export function signalHandlers(root: string): string[] {
  return patternSites(root, SIGNAL_LISTENER, (rel) => rel.startsWith("libs/lifecycle/"));
}

test("signals are handled through runUntilSignal only", () => {
  assert.deepEqual(signalHandlers(REPO), [], "wrap the process's main in runUntilSignal (@farm/lifecycle) and drain when its signal aborts");
});

test("the rule catches process.on and process.once for a signal, and lets exit hooks and lifecycle pass", () => {
  withTree("signal-rule-", {
    "libs/x/src/a.ts": 'process.once("exit", () => undefined);\nprocess.on("SIGINT", stop);\n',
    "loadtest/src/b.ts": "process.once(\n  'SIGTERM', stop);\n",
    "libs/lifecycle/src/run.ts": 'process.on("SIGTERM", onSignal);\n',
  }, (root) => {
    assert.deepEqual(signalHandlers(root), ["libs/x/src/a.ts:2", "loadtest/src/b.ts:1"]);
  });
});
