/** The commands built on the worker, run as a user would: `farm demo` and `farm bench farm`, small. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { readEpisodes, REPO } from "./harness.ts";

const run = promisify(execFile);
const FARM = path.join(REPO, "services/cli/bin/farm.js");
// The demo starts its own Redis unless REDIS_URL is set: make sure it is not.
const env: NodeJS.ProcessEnv = { ...process.env, FARM_LOG_LEVEL: "error" };
delete env.REDIS_URL;

test("farm demo: a small campaign end to end, a summary, exit 0", async () => {
  const out = mkdtempSync(path.join(os.tmpdir(), "farm-demo-test-"));
  try {
    const { stdout } = await run(process.execPath, [FARM, "demo", "--emulators", "2", "--episodes", "6", "--max-steps", "20", "--out", out], { cwd: REPO, env, timeout: 120_000 });
    assert.match(stdout, /summary of campaign demo-\S+ \(completed\)/);
    assert.match(stdout, /episodes: +6 completed, 0 failed of 6/);
    assert.match(stdout, /steps\/s/);
    assert.match(stdout, /farm_episodes_total=6 /);
    assert.match(stdout, /npx farm trajectories inspect /);
    const eps = await readEpisodes(out);
    assert.equal(new Set(eps.map((e) => e.episodeId)).size, 6);
    assert.equal(eps.length, 6);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test("farm bench farm: figures and the key=value last line", async () => {
  const { stdout } = await run(process.execPath, [FARM, "bench", "farm", "--devices", "2", "--episodes", "6", "--max-steps", "10"], { cwd: REPO, env, timeout: 120_000 });
  const last = stdout.trim().split("\n").at(-1) ?? "";
  assert.match(last, /^devices=2 transport=grpc episodes_s=[0-9.]+ steps_s=[0-9.]+ worker_cpu_us_per_step=[0-9.]+ start_p99_ms=[0-9.]+$/);
  assert.match(stdout, /episodes completed \| 6 of 6/);
});
