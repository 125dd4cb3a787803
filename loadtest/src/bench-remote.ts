/**
 * `farm bench remote [--samples N] [--profile instant]`: one environment step as a remote dm_env_rpc client
 * sees it (Step request → response over gRPC, through the worker's server and the episode runner) without
 * pixels and with 360x640 pixels, beside the same step taken locally (EpisodeRun.step() in-process), in one
 * run, interleaved in rounds (plus the local step with pixels, to show what capturing the screen costs). Two simulated emulators (360x640) in a child process; the worker and the client
 * share this process. Actions alternate TOUCH(0.5, 0.5) / LIFT on both sides.
 * Last line: `remote_step_p50_ms=<a> remote_pixels_step_p50_ms=<b> local_step_p50_ms=<c>`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createInterface } from "node:readline";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AdbDriver } from "@farm/adb";
import { connectEnvironment, DataType, DmEnvRpcError, grpc as grpcJs, tensor, type EnvironmentConnection, type Tensor } from "@farm/dm-env-rpc";
import { DeviceSession } from "@farm/episode";
import { createLogger } from "@farm/log";
import { startAdbServer, startRedis } from "@farm/local-services";
import type { Action, Policy } from "@farm/policy";
import { loadTaskFile } from "@farm/task";
import { resolveWorkerConfig, WorkerService } from "@farm/worker";
import { intOpt, profileOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { startSimChild } from "./sim-child.ts";
import { fmtMs, latencyTable, quantiles } from "./stats.ts";
import { sleep } from "@farm/time";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const H = 640;
const W = 360;
const actionAt = (i: number): Action => (i % 2 === 0 ? { actionType: "TOUCH", touchPosition: [0.5, 0.5] } : { actionType: "LIFT", touchPosition: [0, 0] });
const wire = (a: Action): Record<string, Tensor> => ({ 1: tensor(DataType.INT32, [a.actionType === "TOUCH" ? 0 : 1]), 2: tensor(DataType.FLOAT, a.touchPosition, [2]) });

/** `farm worker` in a child process with the remote-env server on a free port; resolves with its address. */
async function startWorkerChild(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; address: string }> {
  const child = spawn(process.execPath, [path.join(REPO, "services/cli/bin/farm.js"), "worker", ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, FARM_LOG_LEVEL: "warn", ...env } });
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-5000)));
  const address = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (!line.startsWith("{")) return;
      const ready = JSON.parse(line) as { event?: string; env?: string };
      if (ready.event === "worker:ready" && ready.env) resolve(ready.env);
    });
    child.once("exit", () => reject(new Error(`farm worker exited early:\n${err}`)));
  });
  return { child, address };
}

/** CreateWorld, retried while the worker is still binding its device. */
async function createWorld(env: EnvironmentConnection, settings: Record<string, Tensor>): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return (await env.request({ create_world: { settings } })).create_world!.world_name;
    } catch (e) {
      if (!(e instanceof DmEnvRpcError && e.code === grpcJs.status.RESOURCE_EXHAUSTED) || Date.now() > deadline) throw e;
      await sleep(100);
    }
  }
}

/** The local side's policy: the same action sequence, chosen instantly. */
function fixedPolicy(): Policy & { needsPixels: boolean } {
  let i = 0;
  return { name: "bench", version: "1", needsPixels: false, reset: async () => {}, act: async () => actionAt(i++), close: async () => {} };
}

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const samples = intOpt(opts, "samples", 600);
    const where = typeof opts.worker === "string" ? opts.worker : "child";
    if (where !== "child" && where !== "in-process") throw new Error(`--worker must be child or in-process, got ${where}`);
    const profile = profileOpt({ profile: "instant", ...opts });
    const round = 50;
    const redis = await startRedis();
    const adb = await startAdbServer();
    const sim = await startSimChild(2, adb.port, profile, ["--screen", `${W}x${H}`]);
    const tmp = mkdtempSync(path.join(os.tmpdir(), "farm-bench-remote-"));
    const [remoteSerial, localSerial] = sim.serials as [string, string];
    const episode = { settleMs: 20, logSettleMs: 0, apkDirs: [path.join(REPO, "tasks/apks")] };
    const grpc = { mode: "config" as const, endpoints: sim.grpcEndpoints };
    const taskFile = path.join(REPO, "tasks/classic_2048.textproto");
    const outDir = path.join(tmp, "out");
    let worker: WorkerService | undefined;
    let child: ChildProcess | undefined;
    const driver = new AdbDriver({ port: adb.port, grpc });
    try {
      let address: string;
      if (where === "in-process") {
        worker = await WorkerService.create(
          resolveWorkerConfig({ redisUrl: redis.url, adbPort: adb.port, devices: [remoteSerial], taskPaths: [taskFile], outDir, metricsPort: 0, grpc, episode, envPort: 0 }),
          { logger: createLogger({ service: "bench", level: "warn" }), noMetricsServer: true },
        );
        await worker.start();
        address = worker.envAddress!;
      } else {
        const endpoints = Object.entries(sim.grpcEndpoints).map(([serial, e]) => `${serial}=${e.address}`).join(",");
        const args = ["--redis", redis.url, "--adb-port", String(adb.port), "--devices", remoteSerial, "--tasks", taskFile, "--apk-dir", episode.apkDirs[0]!, "--out", outDir, "--metrics-port", "0", "--settle-ms", "20", "--grpc", "config", "--env-port", "0"];
        ({ child, address } = await startWorkerChild(args, { FARM_GRPC_ENDPOINTS: endpoints }));
      }
      // Local: the runner in this process on the other device.
      const session = await DeviceSession.open({ device: driver.device(localSerial), task: loadTaskFile(taskFile), config: episode });
      if (session.state !== "ready") throw new Error(`local device: ${session.unusableReason}`);
      const localPolicy = fixedPolicy();
      const run = await session.startEpisode({ seed: 1, index: 0, policy: localPolicy, limits: { maxEpisodeSteps: 0, maxEpisodeSec: 0 } });
      await run.reset();

      // Remote: one world, no step or time limit, frames at 360x640.
      const env = connectEnvironment(address);
      const settings = { task: tensor(DataType.STRING, ["classic_2048"]), max_episode_steps: tensor(DataType.INT32, [0]), max_episode_sec: tensor(DataType.DOUBLE, [0]), frame_size: tensor(DataType.INT32, [H, W], [2]) };
      const world = await createWorld(env, settings);
      await env.request({ join_world: { world_name: world } });
      await env.request({ step: { requested_observations: [4, 5] } });

      const remoteMs: number[] = [];
      const pixelsMs: number[] = [];
      const localMs: number[] = [];
      const localPixelsMs: number[] = [];
      let k = 0;
      let pixelBytes = 0;
      const remoteStep = async (requested: number[], into: number[] | undefined) => {
        const t0 = performance.now();
        const r = (await env.request({ step: { actions: wire(actionAt(k++)), requested_observations: requested } })).step!;
        if (into) into.push(performance.now() - t0);
        if (r.state !== 1) throw new Error(`the remote episode ended (state ${r.state})`);
        const px = r.observations["1"]?.uint8s?.array;
        if (px) pixelBytes = px.length;
      };
      const localStep = async (into: number[] | undefined, pixels = false) => {
        localPolicy.needsPixels = pixels;
        const t0 = performance.now();
        if (!(await run.step())) throw new Error("the local episode ended");
        if (into) into.push(performance.now() - t0);
      };
      // Warm-up, then interleaved rounds so the three see the same machine.
      for (let i = 0; i < 20; i++) {
        await remoteStep([4, 5], undefined);
        await remoteStep([1, 4, 5], undefined);
        await localStep(undefined);
      }
      while (remoteMs.length < samples) {
        for (let i = 0; i < round && remoteMs.length < samples; i++) await remoteStep([4, 5], remoteMs);
        for (let i = 0; i < round && pixelsMs.length < samples; i++) await remoteStep([1, 4, 5], pixelsMs);
        for (let i = 0; i < round && localMs.length < samples; i++) await localStep(localMs);
        for (let i = 0; i < round && localPixelsMs.length < samples; i++) await localStep(localPixelsMs, true);
      }
      if (pixelBytes !== H * W * 3) throw new Error(`pixels: expected ${H * W * 3} bytes, got ${pixelBytes}`);
      await env.request({ destroy_world: { world_name: world } });
      env.close();
      await run.finish();
      await session.close();

      const a = quantiles(remoteMs);
      const b = quantiles(pixelsMs);
      const c = quantiles(localMs);
      console.log(`remote: Classic 2048 on simulated emulators (${W}x${H}, profile ${profile}), ${samples} steps each, interleaved in rounds of ${round}; worker ${where === "child" ? "in a child process" : "in this process"}, emulators in a child`);
      for (const line of latencyTable("step round trip", 36, [
        { name: "remote Step, no pixels", q: a },
        { name: `remote Step, pixels ${W}x${H} (${(pixelBytes / 1e6).toFixed(2)} MB)`, q: b },
        { name: "local EpisodeRun.step()", q: c },
        { name: "local EpisodeRun.step(), pixels", q: quantiles(localPixelsMs) },
      ])) console.log(line);
      console.log(`remote_step_p50_ms=${fmtMs(a.p50)} remote_pixels_step_p50_ms=${fmtMs(b.p50)} local_step_p50_ms=${fmtMs(c.p50)}`);
    } finally {
      await worker?.close();
      if (child && child.exitCode === null) {
        const exited = new Promise((r) => child!.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      await driver.close();
      await sim.close();
      await adb.close();
      await redis.close();
      rmSync(tmp, { recursive: true, force: true });
    }
  },
};
