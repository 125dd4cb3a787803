/**
 * One config pattern: the environment is read only in each service's config module (flags → environment →
 * defaults, compiled once by @farm/config). Libraries and the rest of the services take values as
 * parameters; the benchmarks (loadtest/src) read theirs in loadtest/src/settings.ts. Two uses of `process.env`
 * are not config reads and stay allowed anywhere: handing the whole environment on to a child process
 * (`...process.env`, `env ?? process.env`). The simulated emulator is a program of its own and resolves its
 * folders from its environment as the real emulator does.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sourceFiles, withTree } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Files that may read the environment, with the reason. */
const ALLOWED = new Map<string, string>([
  ["services/worker/src/config.ts", "the worker's config"],
  ["services/scheduler/src/config.ts", "the scheduler's config"],
  ["services/cli/src/config.ts", "the farm command's config"],
  ["libs/simulator/src/emulator/launcher/avd.ts", "the simulated emulator: ANDROID_AVD_HOME & co., as the emulator"],
  ["libs/simulator/src/cli/emulator.ts", "the `emulator` command's entry: its environment (ANDROID_*), as the emulator's"],
  ["libs/simulator/src/emulator/discovery.ts", "the simulated emulator: XDG_RUNTIME_DIR for discovery files, as the emulator"],
  ["loadtest/src/settings.ts", "the benchmarks' settings (SettingsReader)"],
]);

/** Handing the environment on to a child process is not reading config. */
const CHILD_ENV = /\.\.\.\(?process\.env\b|\?\? process\.env\b/g;

/** `file:line` of every environment read outside the allowed files (comments skipped). */
export function envReads(root: string): string[] {
  const found: string[] = [];
  const packages = ["libs", "services"].flatMap((top) => {
    const dir = path.join(root, top);
    return fs.existsSync(dir) ? fs.readdirSync(dir).map((pkg) => path.join(dir, pkg, "src")) : [];
  });
  for (const src of [...packages, path.join(root, "loadtest/src")]) {
    for (const file of sourceFiles(src)) {
      const rel = path.relative(root, file).split(path.sep).join("/");
      if (ALLOWED.has(rel)) continue;
      fs.readFileSync(file, "utf8").split("\n").forEach((line, i) => {
        if (/^\s*(\*|\/\/|\/\*)/.test(line)) return;
        if (/\bprocess\.env\b/.test(line.replace(CHILD_ENV, ""))) found.push(`${rel}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
    }
  }
  return found;
}

test("only the services' config modules read the environment", () => {
  assert.deepEqual(envReads(REPO), [], "read the setting in the service's config module (@farm/config) and pass it down");
});

test("the check finds a library reading the environment, and lets a child's inherited environment pass", () => {
  withTree("env-reads-", {
    "libs/x/src/a.ts": 'spawn("c", [], { env: { ...process.env, A: "1" } });\n// process.env in a comment\nconst port = process.env.PORT;\n',
    "services/s/src/b.ts": "const env = { ...(process.env as Record<string, string>) };\n",
    "loadtest/src/bench-x.ts": "const level = process.env.FARM_LOG_LEVEL;\n",
  }, (root) => {
    assert.deepEqual(envReads(root), ["libs/x/src/a.ts:3: const port = process.env.PORT;", "loadtest/src/bench-x.ts:1: const level = process.env.FARM_LOG_LEVEL;"]);
  });
});
