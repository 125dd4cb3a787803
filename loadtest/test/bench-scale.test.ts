/**
 * `farm bench scale` end to end at a small size: two worker processes on one Redis run a campaign with jittered
 * steps, and the benchmark prints what it promises — every episode committed once, the hosts' Redis clients,
 * where the starts' time went, the fetch alone (BullMQ's Worker and the farm's) measured beside the farm, and the last line.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const FARM = path.join(REPO, "services", "cli", "bin", "farm.js");

test("bench scale: 20 devices over 2 hosts commit every episode once and print the dispatch figures beside the fetch alone", { timeout: 180_000 }, async () => {
  const args = ["bench", "scale", "--devices", "20", "--hosts", "2", "--episodes", "40", "--warmup", "20", "--max-steps", "3", "--step-ms", "10", "--step-jitter", "50"];
  const { stdout } = await promisify(execFile)(process.execPath, [FARM, ...args], { cwd: REPO, timeout: 170_000, maxBuffer: 1 << 20 });
  const lines = stdout.trim().split("\n");
  assert.match(stdout, /campaign: completed, 40 completed, 0 failed, 40 committed, 0 duplicates prevented/);
  assert.match(stdout, /over 2 worker process\(es\) \(one BullMQ Worker each, at nice 10\)/);
  // Every job of so small a campaign still has its events in Redis, so each start is split into its parts.
  assert.match(stdout, /where it goes \(the last 40 jobs, whose events Redis still holds\): the scheduler's add reaching Redis p50 \d+ \/ p99 \d+ ms; queued in Redis until a host fetched it p50 \d+ \/ p99 \d+ ms, of which the host's fetch on its way to Redis p50 -?\d+ \/ p99 -?\d+ ms/);
  assert.match(stdout, /the same burst with no episodes, on this Redis \(20 jobs added at once/);
  assert.match(stdout, /BullMQ's Worker \(a round trip per job\): p50 [0-9.]+ ms, p99 [0-9.]+ ms.*the farm's \(bursts\): p50 [0-9.]+ ms, p99 [0-9.]+ ms/);
  assert.match(lines.at(-2) ?? "", /^first_wave_ms=[0-9.]+ steady_start_p99_ms=[0-9.]+ second_half_start_p99_ms=[0-9.]+ bullmq_alone_start_p99_ms=[0-9.]+ burst_alone_start_p99_ms=[0-9.]+$/);
  const last = /^devices=20 hosts=2 redis_clients=(\d+) redis_cpu_pct=[0-9.]+ start_p99_ms=[0-9.]+ episodes_s=[0-9.]+ first_wave_ms=[0-9.]+ steady_start_p99_ms=[0-9.]+$/.exec(lines.at(-1) ?? "");
  assert.ok(last, `last line: ${lines.at(-1)}`);
  assert.ok(Number(last[1]) <= 2 * 10, `at most 10 Redis clients per host: ${last[1]}`);
});
