/**
 * Reset modes through the worker, end to end: real Redis, a real adb server, one simulated emulator found by its
 * discovery file. A `start-snapshot` campaign's first episode saves the start snapshot, the others load it; the
 * trajectories and `farm_episode_resets_total` say so. A `start-snapshot` job for a task whose reset draws from the
 * episode's seed fails at once, without retries, naming the task; so does one carrying a game config (issue 28).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { Queue } from "bullmq";
import { startAdbServer, startRedis, type LocalAdbServer, type LocalRedis } from "@farm/local-services";
import { EPISODE_JOB_VERSION, QUEUE_NAMES, defaultEpisodeJobOptions, episodeJobId, type EpisodeJobData } from "@farm/queue";
import { startSimulatedDevices } from "@farm/simulator";
import { loadTaskFile } from "@farm/task";
import { resolveWorkerConfig, WorkerService } from "../src/index.ts";
import { addCampaign, conn, FAST_EPISODE, readEpisodes, REPO, TASK_FILE, waitForCampaign, type Harness } from "./harness.ts";

const SEEDED = `id: "seeded_reset"
setup_steps: [ { adb_call: { install_apk: { filesystem: { path: "apks/sim_notes.apk" } } } } ]
reset_steps: [
  { adb_call: { start_random_activity: { activity_list: ["com.farm.simapps.notes/com.farm.simapps.notes.MainActivity"] timeout_sec: 2.0 } } }
]
max_num_steps: 5
log_parsing_config: { filters: ["AndroidRLTask:V"] log_regexps: { reward: "^[Rr]eward: ([-+]?[0-9]*)$" } }
`;

let redis: LocalRedis;
let adb: LocalAdbServer;
let emulators: Awaited<ReturnType<typeof startSimulatedDevices>>;
let worker: WorkerService;
let queue: Queue;
let runDir: string;
let out: string;
let seededFile: string;
const savedXdg = process.env.XDG_RUNTIME_DIR;

before(async () => {
  runDir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-reset-e2e-"));
  out = path.join(runDir, "out");
  seededFile = path.join(runDir, "tasks", "seeded_reset.textproto");
  fs.mkdirSync(path.join(runDir, "tasks", "apks"), { recursive: true });
  fs.copyFileSync(path.join(REPO, "tasks/apks/sim_notes.apk"), path.join(runDir, "tasks", "apks", "sim_notes.apk"));
  fs.writeFileSync(seededFile, SEEDED);
  process.env.XDG_RUNTIME_DIR = runDir;
  redis = await startRedis();
  adb = await startAdbServer();
  emulators = await startSimulatedDevices({ adbPort: adb.port, count: 1, seed: 31, emulator: {} });
  const prefix = `{wr${process.pid}}`;
  queue = new Queue(QUEUE_NAMES.episodes, { connection: conn(redis.url), prefix });
  const config = resolveWorkerConfig({
    redisUrl: redis.url,
    queuePrefix: prefix,
    adbPort: adb.port,
    taskPaths: [TASK_FILE, seededFile],
    outDir: out,
    metricsPort: 0,
    lockDurationMs: 5000,
    stalledIntervalMs: 2000,
    drainTimeoutMs: 5000,
    episode: FAST_EPISODE,
    grpc: { mode: "discover", discoveryDir: path.join(runDir, "avd", "running") },
  });
  worker = await WorkerService.create(config);
  await worker.start();
});

after(async () => {
  await worker?.close();
  await queue?.close();
  for (const e of emulators?.emulators ?? []) for (const s of await e.device.snapshots.list()) if (s.name.startsWith("farm-")) await e.device.snapshots.delete(s.name);
  await emulators?.close();
  await adb?.close();
  await redis?.close();
  if (savedXdg === undefined) delete process.env.XDG_RUNTIME_DIR;
  else process.env.XDG_RUNTIME_DIR = savedXdg;
  fs.rmSync(runDir, { recursive: true, force: true });
});

const metricValue = (text: string, labels: string) => Number(new RegExp(`^farm_episode_resets_total\\{${labels}[,}].* (\\S+)$`, "m").exec(text)?.[1] ?? NaN);

test("a start-snapshot campaign: saved by the first episode, loaded by the others; counted by mode and kind", async () => {
  const h = { queue, task: loadTaskFile(TASK_FILE) } as unknown as Harness;
  await addCampaign(h, { campaignId: "start", episodes: 4, options: { maxEpisodeSteps: 6, resetMode: "start-snapshot" } });
  assert.deepEqual(await waitForCampaign(h, "start", 4, 120_000), { completed: 4, failed: 0 });
  const kinds = (await readEpisodes(out, "start")).sort((a, b) => a.episodeIndex - b.episodeIndex).map((e) => e.resetKind);
  assert.deepEqual(kinds, ["steps", "start_snapshot", "start_snapshot", "start_snapshot"]);
  const text = await (await fetch(`${worker.metricsUrl}/metrics`)).text();
  assert.equal(metricValue(text, 'mode="start-snapshot",kind="steps"'), 1);
  assert.equal(metricValue(text, 'mode="start-snapshot",kind="start_snapshot"'), 3);
  assert.equal(metricValue(text, 'mode="steps",kind="steps"'), 0);
});

test("a start-snapshot job for a seeded reset fails at once, without retries, naming the task", async () => {
  const h = { queue, task: loadTaskFile(seededFile) } as unknown as Harness;
  await addCampaign(h, { campaignId: "seeded", episodes: 1, attempts: 3, options: { maxEpisodeSteps: 2, resetMode: "start-snapshot" } });
  assert.deepEqual(await waitForCampaign(h, "seeded", 1, 60_000), { completed: 0, failed: 1 });
  const job = await queue.getJob(episodeJobId("seeded", 0));
  assert.equal(job?.attemptsMade, 1, "not retried");
  assert.match(job?.failedReason ?? "", /task 'seeded_reset' reset_steps\[0\] \(line 4\): start_random_activity/);
});

test("a start-snapshot job with a game config fails at once, without retries, saying why", async () => {
  const task = loadTaskFile(TASK_FILE);
  const data: EpisodeJobData = {
    v: EPISODE_JOB_VERSION,
    campaignId: "configured",
    episodeIndex: 0,
    taskId: task.task.id,
    taskHash: task.hash,
    policy: { spec: "random" },
    seed: 1,
    options: { maxEpisodeSteps: 2, resetMode: "start-snapshot" },
    goal: "Reach 2048",
    gameConfig: { size: 4 },
  };
  await queue.add("episode", data, { ...defaultEpisodeJobOptions, attempts: 3, backoff: { type: "fixed", delay: 200 }, jobId: episodeJobId("configured", 0) });
  const h = { queue, task } as unknown as Harness;
  assert.deepEqual(await waitForCampaign(h, "configured", 1, 60_000), { completed: 0, failed: 1 });
  const job = await queue.getJob(episodeJobId("configured", 0));
  assert.equal(job?.attemptsMade, 1, "not retried");
  assert.match(job?.failedReason ?? "", /game config .*start-snapshot/);
});
