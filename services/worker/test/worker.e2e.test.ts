/**
 * The worker end to end, in process: real Redis, real adb server, simulated emulators.
 * 40 episodes on 4 devices → exactly 40 distinct episodes in Avro; adding the campaign again adds none;
 * bad task id / hash fail at once with the reason; /metrics counts the campaign.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { failureCodeOf, episodeJobId, parseEpisodeJobResult } from "@farm/queue";
import { Scheduler } from "@farm/scheduler";
import { resolveWorkerConfig, WorkerService } from "../src/index.ts";
import { addCampaign, campaignJobs, FAST_EPISODE, listFiles, readEpisodes, startHarness, TASK_FILE, temporaryFiles, until as untilHolds, waitForCampaign, type Harness } from "./harness.ts";

let h: Harness;
let worker: WorkerService;
let out: string;

before(async () => {
  h = await startHarness(4);
  out = path.join(h.tmp, "out");
  const config = resolveWorkerConfig({
    redisUrl: h.redis.url,
    queuePrefix: h.prefix,
    adbPort: h.adb.port,
    taskPaths: [TASK_FILE],
    outDir: out,
    metricsPort: 0,
    lockDurationMs: 5000,
    stalledIntervalMs: 2000,
    drainTimeoutMs: 5000,
    unusableRetryMs: 1000,
    episode: FAST_EPISODE,
  });
  worker = await WorkerService.create(config);
  await worker.start();
});

after(async () => {
  await worker?.close();
  await h?.close();
});

test("a campaign of 40 episodes on 4 devices (through the scheduler) yields exactly 40 distinct episodes; re-submitting adds none", async () => {
  // Order-independent: everything below is about campaign c40 only, and /metrics is read as a difference.
  await allDevicesBound();
  const metricsBefore = await (await fetch(`${worker.metricsUrl}/metrics`)).text();
  const c40Files = () => listFiles(out).filter((f) => path.basename(f).startsWith("c40-"));
  const scheduler = await Scheduler.create({ redisUrl: h.redis.url, prefix: h.prefix, taskPaths: [TASK_FILE], windowSize: 8, tickMs: 500 });
  await scheduler.start();
  try {
    const input = { id: "c40", taskId: h.task.task.id, taskHash: h.task.hash, policy: "random", episodes: 40, options: { maxEpisodeSteps: 20 } };
    assert.equal((await scheduler.submit(input)).created, true);
    let st = await scheduler.status("c40");
    const deadline = Date.now() + 120_000;
    while (st.state === "running" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      st = await scheduler.status("c40");
    }
    assert.equal(st.state, "completed", JSON.stringify(st));
    assert.equal(st.completed, 40);
    assert.equal(st.failed, 0);
    assert.equal(st.commits.committed, 40, "one claim per episode");
    assert.equal(st.commits.duplicatesPrevented, 0);
    assert.equal(st.commits.quarantined, 0);
    // Re-submitting the same campaign adds nothing.
    const again = await scheduler.submit(input);
    assert.equal(again.created, false);
  } finally {
    await scheduler.close();
  }
  const eps = await readEpisodes(out, "c40");
  const ids = new Set(eps.map((e) => e.episodeId));
  assert.equal(eps.length, 40);
  assert.equal(ids.size, 40);
  for (let i = 0; i < 40; i++) assert.ok(ids.has(`c40-${i}`), `episode c40-${i} missing`);
  const devices = new Set(eps.map((e) => e.deviceSerial));
  assert.equal(devices.size, 4, "every device ran episodes");
  const job = await h.queue.getJob(episodeJobId("c40", 7));
  const result = parseEpisodeJobResult(job?.returnvalue, job?.id);
  assert.equal(result.trajectoryFile, eps.find((e) => e.episodeId === "c40-7")?.file);
  const filesBefore = c40Files();
  assert.equal(filesBefore.length, 40);
  assert.deepEqual(temporaryFiles(out, { running: true }), [], "no temporary files (the worker runs on)");

  // The same jobs added again directly (same ids): nothing new to run, nothing new written.
  await addCampaign(h, { campaignId: "c40", episodes: 40 });
  assert.deepEqual(await waitForCampaign(h, "c40", 40, 10_000), { completed: 40, failed: 0 });
  assert.deepEqual(c40Files(), filesBefore);

  // Even when the jobs are gone from Redis (removed after completion), a re-run finds the committed files.
  await h.queue.clean(0, 1000, "completed");
  await addCampaign(h, { campaignId: "c40", episodes: 40 });
  assert.deepEqual(await waitForCampaign(h, "c40", 40, 60_000), { completed: 40, failed: 0 });
  assert.deepEqual(c40Files(), filesBefore);
  const eps2 = await readEpisodes(out, "c40");
  assert.equal(eps2.length, 40);
  // …by their claims: the re-run completed from them without running anything.
  assert.equal((await worker.arbiter.stats("c40")).completedFromClaim, 40);

  // /metrics counts the campaign once.
  const text = await (await fetch(`${worker.metricsUrl}/metrics`)).text();
  const added = (name: string) => sumOf(text, name) - sumOf(metricsBefore, name);
  assert.equal(added("farm_episodes_total"), 40, text.split("\n").filter((l) => l.startsWith("farm_episodes_total")).join("\n"));
  assert.equal(added("farm_trajectory_files_total"), 40);
  assert.equal(added("farm_steps_total"), eps.reduce((a, e) => a + e.steps.length, 0));
  assert.ok(added("farm_job_start_latency_seconds_count") >= 40);
  assert.match(text, /farm_devices\{[^}]*state="(ready|busy)"[^}]*\} [1-4]/);
  assert.equal(sumOf(text, "farm_commits_total"), 40 + 40, "40 committed + 40 completed from the claim");
  assert.equal(sumOf(text, "farm_redis_up"), 1);
});

test("a job naming an unknown task or a wrong hash fails at once, not retried, with the reason", async () => {
  await addCampaign(h, { campaignId: "bad-id", episodes: 1, taskId: "no_such_task" });
  await addCampaign(h, { campaignId: "bad-hash", episodes: 1, taskHash: "0".repeat(64) });
  assert.deepEqual(await waitForCampaign(h, "bad-id", 1, 20_000), { completed: 0, failed: 1 });
  assert.deepEqual(await waitForCampaign(h, "bad-hash", 1, 20_000), { completed: 0, failed: 1 });
  const a = await h.queue.getJob(episodeJobId("bad-id", 0));
  const b = await h.queue.getJob(episodeJobId("bad-hash", 0));
  assert.equal(failureCodeOf(a?.failedReason), "TASK_UNKNOWN");
  assert.match(a?.failedReason ?? "", /no_such_task/);
  assert.equal(failureCodeOf(b?.failedReason), "TASK_HASH_MISMATCH");
  assert.equal(a?.attemptsMade, 1);
  assert.equal(b?.attemptsMade, 1);
});

test("job options apply per episode: step limit and frame cadence", async () => {
  await allDevicesBound();
  await addCampaign(h, { campaignId: "opts", episodes: 2, options: { maxEpisodeSteps: 10, frameEvery: 5 } });
  assert.deepEqual(await waitForCampaign(h, "opts", 2, 30_000), { completed: 2, failed: 0 });
  const eps = await readEpisodes(out, "opts");
  assert.equal(eps.length, 2);
  for (const e of eps) {
    assert.equal(e.cause, "step_limit");
    assert.equal(e.steps.length, 11, "max_episode_steps N → N+1 actions");
    assert.deepEqual(e.steps.filter((st) => st.frame && st.frame.length > 0).map((st) => st.index), [5, 10]);
  }
});

test("a device that goes away stops taking jobs, its episode is retried elsewhere, and it is bound again when it comes back", async (t) => {
  await allDevicesBound();
  const { busy, sim } = await campaignOnBusyDevice("drop", 12);
  sim.faults.dropConnection();
  t.after(() => sim.faults.reconnect()); // a failure here must not leave the device away for the next test
  await until(`${busy} unbound`, 30_000, () => worker.deviceStates()[busy] === undefined);
  assert.deepEqual(await waitForCampaign(h, "drop", 12, 90_000), { completed: 12, failed: 0 });
  const eps = await readEpisodes(out, "drop");
  assert.equal(eps.length, 12);
  assert.equal(new Set(eps.map((e) => e.episodeId)).size, 12);
  assert.ok(eps.every((e) => e.cause === "step_limit" || e.cause === "episode_end"), JSON.stringify(eps.map((e) => `${e.episodeId}:${e.cause}`)));

  sim.faults.reconnect();
  await until(`${busy} bound again`, 30_000, () => worker.deviceStates()[busy] === "ready");
});

test("device trouble: the job goes back to the queue at once while the device recovers (paused), then the device takes jobs again", async (t) => {
  await allDevicesBound();
  const { busy, sim } = await campaignOnBusyDevice("blip", 8);
  sim.faults.hang(true);
  t.after(() => sim.faults.hang(false));
  await until(`${busy} recovering`, 30_000, () => worker.deviceStates()[busy] === "recovering");
  sim.faults.hang(false);
  assert.deepEqual(await waitForCampaign(h, "blip", 8, 60_000), { completed: 8, failed: 0 });
  await until(`${busy} ready again`, 30_000, () => worker.deviceStates()[busy] === "ready");
  const retried = (await campaignJobs(h, "blip", 8)).filter((j) => (j?.attemptsMade ?? 0) > 0);
  assert.ok(retried.length >= 1, "the troubled episode was retried");
  await addCampaign(h, { campaignId: "blip2", episodes: 12, options: { maxEpisodeSteps: 30 } });
  assert.deepEqual(await waitForCampaign(h, "blip2", 12, 60_000), { completed: 12, failed: 0 });
  const eps = await readEpisodes(out, "blip2");
  assert.ok(eps.some((e) => e.deviceSerial === busy), "the recovered device runs episodes again");
});

test("a hung device ends its episode as device trouble, becomes unusable after recovery fails, its job is retried on another device; it is bound again later", async (t) => {
  await allDevicesBound();
  const { busy, sim } = await campaignOnBusyDevice("hang", 8);
  sim.faults.hang(true);
  t.after(() => sim.faults.hang(false));
  // Recovery cannot reach it: the device is retired (no slot) while the others finish the campaign.
  await until(`${busy} retired`, 60_000, () => worker.deviceStates()[busy] === undefined);
  assert.deepEqual(await waitForCampaign(h, "hang", 8, 90_000), { completed: 8, failed: 0 });
  const eps = await readEpisodes(out, "hang");
  assert.equal(eps.length, 8);
  assert.equal(new Set(eps.map((e) => e.episodeId)).size, 8);
  const retried = await campaignJobs(h, "hang", 8);
  const again = retried.filter((j) => (j?.attemptsMade ?? 0) > 0);
  assert.ok(again.length >= 1, "the hung device's job was retried");
  for (const j of again) {
    const r = parseEpisodeJobResult(j!.returnvalue, j!.id);
    assert.notEqual(r.device, busy, `job ${j!.id} was retried on another device`);
  }
  sim.faults.hang(false);
  await until(`${busy} bound again`, 30_000, () => worker.deviceStates()[busy] === "ready");
});

/** Waits for a condition on the worker; a timeout shows the device states. */
const until = (what: string, timeoutMs: number, check: () => boolean) => untilHolds(what, timeoutMs, check, { detail: () => JSON.stringify(worker.deviceStates()) });

/** Every simulated device bound to the worker (ready or busy): the starting point of each test, whatever ran before. */
async function allDevicesBound(): Promise<void> {
  const serials = h.sims.devices.map((d) => d.serial);
  await until("all devices bound", 90_000, () => serials.every((s) => worker.deviceStates()[s] === "ready" || worker.deviceStates()[s] === "busy"));
}

/** A device currently in `state`. */
async function someDevice(state: string): Promise<string> {
  let found: string | undefined;
  await until(`a ${state} device`, 30_000, () => (found = Object.entries(worker.deviceStates()).find(([, s]) => s === state)?.[0]) !== undefined);
  return found!;
}

/** Adds a campaign of long episodes and returns a device running one of them, with its simulator. */
async function campaignOnBusyDevice(campaignId: string, episodes: number) {
  await addCampaign(h, { campaignId, episodes, options: { maxEpisodeSteps: 150 } });
  const busy = await someDevice("busy");
  return { busy, sim: h.sims.devices.find((d) => d.serial === busy)! };
}

/** Sum of every sample of `name` (with any labels) in an exposition text. */
export function sumOf(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    const m = new RegExp(`^${name}(\\{[^}]*\\})? ([0-9.eE+-]+)$`).exec(line);
    if (m) sum += Number(m[2]);
  }
  return sum;
}
