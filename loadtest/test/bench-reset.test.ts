/**
 * `farm bench reset` end to end at the instant profile (figures are the benchmark's job, not the test's): each mode
 * reset the way it promises, as many times as asked, and the last line; `--heavy` runs the heavy-reset task.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const FARM = path.join(REPO, "services", "cli", "bin", "farm.js");
const LAST = /^steps_reset_p50_ms=[0-9.]+ setup_snapshot_p50_ms=[0-9.]+ start_snapshot_p50_ms=[0-9.]+ speedup=[0-9.]+$/;

for (const heavy of [false, true]) {
  test(`bench reset${heavy ? " --heavy" : ""}: each mode measured on its own kind of reset, and the last line`, { timeout: 180_000 }, async () => {
    const args = ["bench", "reset", "--episodes", "2", "--profile", "instant", ...(heavy ? ["--heavy"] : [])];
    const { stdout } = await promisify(execFile)(process.execPath, [FARM, ...args], { cwd: REPO, timeout: 170_000, maxBuffer: 1 << 20 });
    assert.match(stdout, heavy ? /tasks\/classic_2048_heavy_reset\.textproto/ : /tasks\/classic_2048\.textproto/);
    // The unmeasured first episodes save the snapshots; then every reset is of its mode's own kind (no fallback).
    assert.match(stdout, /resets: \{"setup-snapshot\/steps":1,"start-snapshot\/steps":1,"steps\/steps":2,"setup-snapshot\/snapshot":2,"start-snapshot\/start_snapshot":2\}/);
    assert.match(stdout, /start-snapshot: load, no reset steps\s+2 /);
    assert.match(stdout.trim().split("\n").at(-1) ?? "", LAST);
  });
}
