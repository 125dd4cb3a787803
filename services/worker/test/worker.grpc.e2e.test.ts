/**
 * The worker on the emulator's fast paths, end to end: real Redis, a real adb server, simulated emulators
 * that serve gRPC and write discovery files, and one bare adb device without gRPC. A campaign with frames
 * (JPEG, as the job asks) runs on all of them: actions and frames go over gRPC where the discovery file
 * offers it, the bare device keeps the adb action channel, and every episode is stored once.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { Queue } from "bullmq";
import sharp from "sharp";
import { capturedLogger } from "@farm/log/testing";
import { startAdbServer, startRedis, type LocalAdbServer, type LocalRedis } from "@farm/local-services";
import { QUEUE_NAMES } from "@farm/queue";
import { startSimulatedDevices } from "@farm/simulator";
import { loadTaskFile } from "@farm/task";
import { resolveWorkerConfig, WorkerService } from "../src/index.ts";
import { addCampaign, conn, FAST_EPISODE, readEpisodes, TASK_FILE, waitForCampaign, type Harness } from "./harness.ts";

let redis: LocalRedis;
let adb: LocalAdbServer;
let emulators: Awaited<ReturnType<typeof startSimulatedDevices>>;
let bare: Awaited<ReturnType<typeof startSimulatedDevices>>;
let worker: WorkerService;
let queue: Queue;
let runDir: string;
let out: string;
let logLines: Array<Record<string, unknown>> = [];
const savedXdg = process.env.XDG_RUNTIME_DIR;

before(async () => {
  runDir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-grpc-e2e-"));
  out = path.join(runDir, "out");
  // Emulators write pid_<pid>.ini under $XDG_RUNTIME_DIR/avd/running, as the real one does.
  process.env.XDG_RUNTIME_DIR = runDir;
  redis = await startRedis();
  adb = await startAdbServer();
  emulators = await startSimulatedDevices({ adbPort: adb.port, count: 2, seed: 11, emulator: {} });
  bare = await startSimulatedDevices({ adbPort: adb.port, count: 1, seed: 21 });
  const prefix = `{wg${process.pid}}`;
  queue = new Queue(QUEUE_NAMES.episodes, { connection: conn(redis.url), prefix });
  const { logger, lines } = capturedLogger("worker");
  logLines = lines;
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
    episode: FAST_EPISODE,
    grpc: { mode: "discover", discoveryDir: path.join(runDir, "avd", "running") },
  });
  worker = await WorkerService.create(config, { logger });
  await worker.start();
});

after(async () => {
  await worker?.close();
  await queue?.close();
  await emulators?.close();
  await bare?.close();
  await adb?.close();
  await redis?.close();
  if (savedXdg === undefined) delete process.env.XDG_RUNTIME_DIR;
  else process.env.XDG_RUNTIME_DIR = savedXdg;
  fs.rmSync(runDir, { recursive: true, force: true });
});

test("a campaign with frames runs over gRPC on emulators that offer it and over adb on a device without; JPEG frames as asked", async () => {
  const h = { queue, task: loadTaskFile(TASK_FILE) } as unknown as Harness;
  await addCampaign(h, { campaignId: "fast", episodes: 9, options: { maxEpisodeSteps: 12, frameEvery: 3, frameEncoding: "jpeg:80" } });
  assert.deepEqual(await waitForCampaign(h, "fast", 9, 120_000), { completed: 9, failed: 0 });
  const eps = await readEpisodes(out, "fast");
  assert.equal(eps.length, 9);
  assert.equal(new Set(eps.map((e) => e.episodeId)).size, 9);
  for (const e of eps) {
    assert.equal(e.frameEncoding, "jpeg:80");
    const framed = e.steps.filter((s) => s.frame);
    assert.deepEqual(framed.map((s) => s.index), e.steps.map((s) => s.index).filter((i) => i % 3 === 0));
    const meta = await sharp(framed[0]!.frame!).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ["jpeg", 360, 640]);
  }
  // Actions went over gRPC on the emulators, over the adb shell channel on the bare device.
  const channels = logLines.filter((l) => l.event === "adb:action-channel");
  const grpcSerials = new Set(channels.filter((l) => l.transport === "grpc").map((l) => l.serial));
  assert.deepEqual([...grpcSerials].sort(), emulators.emulators.map((e) => e.serial).sort());
  assert.ok(!grpcSerials.has(bare.devices[0]!.serial));
  const ran = new Set(eps.map((e) => e.deviceSerial));
  for (const s of [...emulators.emulators.map((e) => e.serial)]) assert.ok(ran.has(s), `no episode ran on ${s} (gRPC)`);
  assert.ok(ran.has(bare.devices[0]!.serial), "no episode ran on the device without gRPC");
});
