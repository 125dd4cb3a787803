/**
 * Emulators the worker launches, end to end: real Redis, a real adb server, and the simulated `emulator`
 * executable started by the worker itself (`launch`: count, AVD, executable). A campaign completes on the
 * launched emulators (actions over their gRPC); an emulator killed with SIGKILL mid-campaign is relaunched
 * (counted by cause in /metrics), its episode retried, and the campaign ends with exactly N distinct
 * committed episodes; drain shuts every launched emulator down.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { Queue } from "bullmq";
import { parseDiscovery } from "@farm/emulator-grpc";
import { createLogger } from "@farm/log";
import { startAdbServer, startRedis, type LocalAdbServer, type LocalRedis } from "@farm/local-services";
import { episodeJobId, QUEUE_NAMES } from "@farm/queue";
import { createAvd } from "@farm/simulator";
import { loadTaskFile } from "@farm/task";
import { resolveWorkerConfig, WorkerService } from "../src/index.ts";
import { addCampaign, conn, FAST_EPISODE, readEpisodes, REPO, TASK_FILE, until, waitForCampaign, type Harness } from "./harness.ts";

const EMULATOR = path.join(REPO, "libs/simulator/sdk/emulator/emulator");
const COUNT = 2;
let redis: LocalRedis;
let adb: LocalAdbServer;
let worker: WorkerService;
let queue: Queue;
let runDir: string;
let out: string;
const saved = { xdg: process.env.XDG_RUNTIME_DIR, avdHome: process.env.ANDROID_AVD_HOME };

before(async () => {
  runDir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-launch-e2e-"));
  out = path.join(runDir, "out");
  // The launched emulators inherit these: their AVD home and where they write discovery files.
  process.env.XDG_RUNTIME_DIR = runDir;
  process.env.ANDROID_AVD_HOME = path.join(runDir, "avd-home");
  fs.mkdirSync(process.env.ANDROID_AVD_HOME, { recursive: true });
  createAvd(process.env.ANDROID_AVD_HOME, "Farm_Launch", { width: 360, height: 640 });
  redis = await startRedis();
  adb = await startAdbServer();
  const prefix = `{wl${process.pid}}`;
  queue = new Queue(QUEUE_NAMES.episodes, { connection: conn(redis.url), prefix });
  const config = resolveWorkerConfig({
    redisUrl: redis.url,
    queuePrefix: prefix,
    adbPort: adb.port,
    taskPaths: [TASK_FILE],
    outDir: out,
    metricsPort: 0,
    lockDurationMs: 5000,
    stalledIntervalMs: 2000,
    drainTimeoutMs: 5000,
    unusableRetryMs: 1000,
    episode: FAST_EPISODE,
    grpc: { mode: "discover", discoveryDir: path.join(runDir, "avd", "running") },
    launch: { count: COUNT, avd: "Farm_Launch", emulator: EMULATOR, basePort: 5820, healthIntervalMs: 500, bootTimeoutMs: 60_000 },
  });
  worker = await WorkerService.create(config, { logger: createLogger({ service: "worker", level: "warn" }) });
  await worker.start();
});

after(async () => {
  await worker?.close();
  await queue?.close();
  await adb?.close();
  await redis?.close();
  for (const [k, v] of [["XDG_RUNTIME_DIR", saved.xdg], ["ANDROID_AVD_HOME", saved.avdHome]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  fs.rmSync(runDir, { recursive: true, force: true });
});

/** Serial → pid of the emulators' discovery files; a live process wins over a stale file (a SIGKILLed emulator leaves its file). */
function launchedPids(): Map<string, number> {
  const m = new Map<string, number>();
  for (const [serial, pid] of discoveryEntries()) if (!m.has(serial) || alive(pid)) m.set(serial, pid);
  return m;
}

function runningPidsOf(serial: string): number[] {
  return discoveryEntries().filter(([s]) => s === serial).map(([, pid]) => pid);
}

function discoveryEntries(): Array<[string, number]> {
  const dir = path.join(runDir, "avd", "running");
  const out: Array<[string, number]> = [];
  for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    const info = parseDiscovery(fs.readFileSync(path.join(dir, f), "utf8"));
    const pid = /^pid_(\d+)/.exec(f)?.[1];
    if (pid && info.get("port.serial")) out.push([`emulator-${Number(info.get("port.serial"))}`, Number(pid)]);
  }
  return out;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const metric = async (line: RegExp): Promise<number> => {
  const text = await (await fetch(`${worker.metricsUrl}/metrics`)).text();
  const m = text.split("\n").find((l) => line.test(l));
  return m ? Number(m.split(" ").pop()) : NaN;
};

const h = () => ({ queue, task: loadTaskFile(TASK_FILE) }) as unknown as Harness;

test("a campaign completes on the emulators the worker launched, actions over their gRPC", async () => {
  await until("both launched emulators bound", 90_000, () => Object.values(worker.deviceStates()).filter((s) => s === "ready" || s === "busy").length === COUNT, { everyMs: 200, detail: () => JSON.stringify(worker.deviceStates()) });
  await addCampaign(h(), { campaignId: "launched", episodes: 6, options: { maxEpisodeSteps: 10 } });
  assert.deepEqual(await waitForCampaign(h(), "launched", 6, 120_000), { completed: 6, failed: 0 });
  const eps = await readEpisodes(out, "launched");
  assert.equal(eps.length, 6);
  const serials = [...launchedPids().keys()].sort();
  assert.equal(serials.length, COUNT);
  for (const e of eps) assert.ok(serials.includes(e.deviceSerial), `${e.deviceSerial} is a launched emulator`);
  assert.equal(await metric(/^farm_device_transports\{.*transport="grpc"/), COUNT);
});

test("an emulator SIGKILLed mid-campaign is relaunched, its episode retried, exactly N episodes committed", async () => {
  const N = 10;
  await addCampaign(h(), { campaignId: "killed", episodes: N, options: { maxEpisodeSteps: 150 } });
  await until("an episode running", 60_000, async () => (await queue.getActiveCount()) >= 1, { everyMs: 50 });
  const [serial, pid] = [...launchedPids()][0]!;
  process.kill(pid, "SIGKILL");
  await until(`${serial} relaunched`, 90_000, async () => (await metric(/^farm_emulator_relaunches_total\{.*cause="exited"/)) >= 1, { everyMs: 300 });
  assert.deepEqual(await waitForCampaign(h(), "killed", N, 240_000), { completed: N, failed: 0 });
  const eps = await readEpisodes(out, "killed");
  assert.equal(eps.length, N, "one committed file per episode");
  assert.equal(new Set(eps.map((e) => e.episodeIndex)).size, N);
  const attempts = await Promise.all(Array.from({ length: N }, async (_, i) => (await queue.getJob(episodeJobId("killed", i)))?.attemptsMade ?? 0));
  assert.ok(attempts.some((a) => a > 1), `an episode was retried (attempts: ${attempts.join(",")})`);
  // The campaign can end on the other emulator before the relaunched one is up (its discovery file is
  // written when it has started; the killed one's file stays behind): wait for the new process.
  await until(`${serial} up again as a new process`, 90_000, () => runningPidsOf(serial).some((p) => p !== pid && alive(p)), { everyMs: 300 });
  const relaunched = launchedPids().get(serial);
  assert.ok(relaunched !== undefined && relaunched !== pid && alive(relaunched), "the same serial runs again, as a new process");
});

test("drain shuts every launched emulator down", async () => {
  const pids = [...launchedPids().values()];
  assert.equal(pids.length, COUNT);
  await worker.close();
  for (const pid of pids) assert.ok(!alive(pid), `emulator ${pid} still running after drain`);
});
