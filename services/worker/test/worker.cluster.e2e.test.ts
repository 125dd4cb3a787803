/**
 * The farm unchanged on a real Redis Cluster (3 masters + 3 replicas, `redis-cli --cluster create`), named by
 * REDIS_URL `redis+cluster://…`: scheduler and worker run a campaign to exactly N distinct episodes; then the
 * master serving the farm's hash tag is killed mid-campaign, its replica takes over, and the campaign still
 * ends with exactly N distinct episodes and no duplicate, the farm reconnecting by itself.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startAdbServer, startRedisCluster, type LocalAdbServer, type LocalRedisCluster } from "@farm/local-services";
import { Scheduler } from "@farm/scheduler";
import { startSimulatedDevices, type SimFleet } from "@farm/simulator";
import { loadTaskFile } from "@farm/task";
import { resolveWorkerConfig, WorkerService } from "../src/index.ts";
import { FAST_EPISODE, readEpisodes, TASK_FILE, until } from "./harness.ts";

const PREFIX = "{farmc}";
let cluster: LocalRedisCluster;
let adb: LocalAdbServer;
let sims: SimFleet;
let worker: WorkerService;
let scheduler: Scheduler;
let tmp: string;
const task = loadTaskFile(TASK_FILE);

before(async () => {
  cluster = await startRedisCluster();
  adb = await startAdbServer();
  sims = await startSimulatedDevices({ adbPort: adb.port, count: 3 });
  tmp = mkdtempSync(path.join(os.tmpdir(), "farm-cluster-test-"));
  const config = resolveWorkerConfig({
    redisUrl: cluster.url,
    queuePrefix: PREFIX,
    adbPort: adb.port,
    taskPaths: [TASK_FILE],
    outDir: path.join(tmp, "out"),
    metricsPort: 0,
    lockDurationMs: 8000,
    stalledIntervalMs: 3000,
    drainTimeoutMs: 5000,
    unusableRetryMs: 1000,
    episode: FAST_EPISODE,
  });
  worker = await WorkerService.create(config);
  await worker.start();
  scheduler = await Scheduler.create({ redisUrl: cluster.url, prefix: PREFIX, taskPaths: [TASK_FILE], windowSize: 6, tickMs: 500 });
  await scheduler.start();
});

after(async () => {
  await scheduler?.close().catch(() => undefined);
  await worker?.close().catch(() => undefined);
  await sims?.close().catch(() => undefined);
  await adb?.close().catch(() => undefined);
  await cluster?.close().catch(() => undefined);
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function runCampaign(id: string, episodes: number, whileRunning?: () => Promise<void>) {
  const input = { id, taskId: task.task.id, taskHash: task.hash, policy: "random", episodes, options: { maxEpisodeSteps: 15 } };
  assert.equal((await scheduler.submit(input)).created, true);
  await whileRunning?.();
  let st = await scheduler.status(id);
  await until(`campaign ${id} to finish on the cluster`, 240_000, async () => {
    st = await scheduler.status(id).catch(() => st);
    return st.state !== "running";
  }, { everyMs: 300, detail: () => JSON.stringify(st) });
  return st;
}

async function assertExactlyOnce(id: string, episodes: number) {
  const eps = await readEpisodes(path.join(tmp, "out"), id);
  const ids = new Set(eps.map((e) => e.episodeId));
  assert.equal(ids.size, episodes, `distinct episodes of ${id}`);
  assert.equal(eps.length, episodes, `${eps.length - ids.size} duplicate episode files of ${id}`);
}

test("a campaign on a 3-master Redis Cluster ends with exactly N distinct episodes", { timeout: 300_000 }, async () => {
  await until("3 devices bound", 60_000, () => Object.values(worker.deviceStates()).filter((s) => s === "ready" || s === "busy").length === 3);
  const st = await runCampaign("cl24", 24);
  assert.equal(st.state, "completed", JSON.stringify(st));
  assert.equal(st.completed, 24);
  assert.equal(st.commits.committed, 24);
  assert.equal(st.commits.duplicatesPrevented, 0);
  await assertExactlyOnce("cl24", 24);
});

test("killing the master of the farm's slot mid-campaign: a replica takes over, exactly N distinct episodes, 0 duplicates", { timeout: 420_000 }, async () => {
  const master = await cluster.masterOfKey(PREFIX);
  const st = await runCampaign("fo30", 30, async () => {
    await until("a few episodes committed before the kill", 120_000, async () => (await scheduler.status("fo30")).completed >= 5, { everyMs: 200 });
    master.kill();
    await cluster.waitForFailover(master.port, 90_000);
  });
  assert.equal(st.state, "completed", JSON.stringify(st));
  assert.equal(st.completed, 30);
  await assertExactlyOnce("fo30", 30);
  // Reconnected by itself: the worker reports Redis up again.
  await until("the worker to see Redis up after the failover", 60_000, () => worker.redisHealth.up);
});
