/**
 * A worker with `trees: forwarder` (`--trees forwarder`): its devices' screen trees come from AndroidEnv's
 * accessibility forwarder through the host's one hub, seen from outside (/metrics, the devices' own settings);
 * a forged stream for a device's port is refused and counted while the device keeps its own trees; a device
 * whose stream never comes (airplane mode: the forwarder cannot dial the host) runs on uiautomator, said once.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { AdbDriver } from "@farm/adb";
import { forgeForwarderStream } from "@farm/adb/testing";
import { capturedLogger } from "@farm/log/testing";
import { defaultEpisodeJobOptions, EPISODE_JOB_VERSION, episodeJobId, type EpisodeJobData } from "@farm/queue";
import { loadTaskFile } from "@farm/task";
import { resolveWorkerConfig, WorkerService } from "../src/index.ts";
import { FAST_EPISODE, readEpisodes, REPO, startHarness, until, waitForCampaign, type Harness } from "./harness.ts";

const TASK = path.join(REPO, "tasks/todo_create_note.textproto");
const task = loadTaskFile(TASK);
let h: Harness;
let worker: WorkerService;
let driver: AdbDriver;
let out: string;
let logLines: Record<string, unknown>[] = [];
/** The device whose forwarder cannot reach the host (airplane mode on before the worker binds it). */
let offline: string;

before(async () => {
  h = await startHarness(3);
  out = path.join(h.tmp, "out");
  driver = new AdbDriver({ port: h.adb.port });
  offline = h.sims.devices[2]!.serial;
  for (const d of h.sims.devices) assert.equal((await driver.device(d.serial).waitBootComplete(20_000)).status, "ok");
  assert.equal((await driver.device(offline).shell("settings put global airplane_mode_on 1")).status, "ok");
  const { logger, lines } = capturedLogger("worker");
  logLines = lines;
  const config = resolveWorkerConfig({
    redisUrl: h.redis.url,
    queuePrefix: h.prefix,
    adbPort: h.adb.port,
    taskPaths: [TASK],
    policyDir: path.join(REPO, "tasks/solutions"),
    outDir: out,
    metricsPort: 0,
    lockDurationMs: 5000,
    stalledIntervalMs: 2000,
    drainTimeoutMs: 5000,
    trees: "forwarder",
    forwarderConnectMs: 1500,
    episode: { ...FAST_EPISODE, stepTimeoutMs: 8000 },
  });
  worker = await WorkerService.create(config, { logger });
  await worker.start();
  await until("every device bound", 20_000, () => Object.values(worker.deviceStates()).filter((s) => s === "ready").length === 3, { detail: () => JSON.stringify(worker.deviceStates()) });
});

after(async () => {
  await worker?.close();
  await driver?.close();
  await h?.close();
});

/** The campaign's jobs as the scheduler adds them, with the UI-action solution (it picks elements from each step's tree). */
async function runCampaign(campaignId: string, episodes: number): Promise<void> {
  await h.queue.addBulk(
    Array.from({ length: episodes }, (_, i) => {
      const data: EpisodeJobData = { v: EPISODE_JOB_VERSION, campaignId, episodeIndex: i, taskId: task.task.id, taskHash: task.hash, policy: { spec: "scripted:todo_create_note.ui.jsonl" }, seed: 7 + i, options: { maxEpisodeSteps: 30 } };
      return { name: "episode", data, opts: { ...defaultEpisodeJobOptions, jobId: episodeJobId(campaignId, i) } };
    }),
  );
  assert.deepEqual(await waitForCampaign(h, campaignId, episodes, 25_000), { completed: episodes, failed: 0 });
}

/** `name{labels}` values of the worker's /metrics. */
async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${worker.metricsUrl}/metrics`)).text();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && want.every((w) => l.includes(w)));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

/** The port the hub gave the device (the SET_GRPC endpoint is also the device's no_proxy setting). */
async function forwarderPort(serial: string): Promise<number> {
  const r = await driver.device(serial).shell("settings get global no_proxy");
  const m = /^10\.0\.2\.2:(\d+)$/.exec(r.stdout.trim());
  assert.ok(m, `no_proxy of ${serial}: ${JSON.stringify(r.stdout)}`);
  return Number(m[1]);
}

test("episodes read their trees from the forwarder; a device whose stream never comes runs on uiautomator, said once", async () => {
  const fwdBefore = await metric("farm_screen_tree_reads_total", { source: "forwarder", outcome: "ok" });
  await runCampaign("fwd", 6);
  const eps = await readEpisodes(out, "fwd");
  assert.equal(eps.length, 6);
  for (const e of eps) assert.equal(e.totalReward, 1, `${e.episodeId} on ${e.deviceSerial} solved the task`);
  const onForwarder = eps.filter((e) => e.deviceSerial !== offline).reduce((n, e) => n + e.steps.length, 0);
  assert.ok(onForwarder > 0, "the devices with a forwarder ran episodes");
  // Every step reads the screen as a tree (the solution's element indices): on the two devices with a
  // forwarder, at least one forest read per step.
  const fwdReads = (await metric("farm_screen_tree_reads_total", { source: "forwarder", outcome: "ok" })) - fwdBefore;
  assert.ok(fwdReads >= onForwarder, `forwarder reads ${fwdReads} ≥ steps ${onForwarder} on the forwarder devices`);
  // The offline device: uiautomator, one fallback (reason no_stream), one log line however many reads.
  if (eps.some((e) => e.deviceSerial === offline)) assert.ok((await metric("farm_screen_tree_reads_total", { source: "uiautomator", outcome: "ok" })) > 0);
  assert.equal(await metric("farm_a11y_forwarder_fallbacks_total", { reason: "no_stream" }), 1);
  const falls = logLines.filter((l) => l.event === "a11y:forwarder-fallback");
  assert.equal(falls.length, 1, JSON.stringify(falls));
  assert.equal(falls[0]!.serial, offline);
  assert.equal(logLines.filter((l) => l.event === "a11y:forwarder-ready").length, 2);
});

test("a forged stream for a device's port is refused, counted in /metrics, and the device keeps its own trees", async () => {
  const serial = h.sims.devices[0]!.serial;
  const port = await forwarderPort(serial);
  const forge = (token?: string): Promise<string> => forgeForwarderStream(port, token === undefined ? {} : { token });
  const before = { bad: await metric("farm_a11y_forwarder_refusals_total", { reason: "bad_token" }), missing: await metric("farm_a11y_forwarder_refusals_total", { reason: "token_missing" }) };
  assert.match(await forge("00".repeat(16)), /^PERMISSION_DENIED: .*bad_token/);
  assert.match(await forge(), /^PERMISSION_DENIED: .*token_missing/);
  assert.equal((await metric("farm_a11y_forwarder_refusals_total", { reason: "bad_token" })) - before.bad, 1);
  assert.equal((await metric("farm_a11y_forwarder_refusals_total", { reason: "token_missing" })) - before.missing, 1);
  // Episodes go on with the devices' own forests (an empty forged one would leave the solution no element to pick).
  const fwdBefore = await metric("farm_screen_tree_reads_total", { source: "forwarder", outcome: "ok" });
  await runCampaign("forged", 3);
  const eps = await readEpisodes(out, "forged");
  for (const e of eps) assert.equal(e.totalReward, 1, `${e.episodeId} on ${e.deviceSerial}`);
  assert.ok((await metric("farm_screen_tree_reads_total", { source: "forwarder", outcome: "ok" })) > fwdBefore);
  assert.equal(await metric("farm_a11y_forwarder_fallbacks_total", { reason: "stream_lost" }), 0);
});
