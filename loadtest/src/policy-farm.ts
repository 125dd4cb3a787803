/**
 * A whole local farm for the remote-policy checks (the Python client test and `farm bench policy-batch`):
 * a private Redis and adb server, N simulated emulators in a child process, one worker host (WorkerService,
 * all N devices, its host-level policy batcher), the scheduler with its HTTP API, and the reference Python
 * policy server (`clients/python`, Debian's /usr/bin/python3) as a child process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { startLocalFarm } from "@farm/local-farm";
import { createLogger } from "@farm/log";
import type { RunningScheduler } from "@farm/scheduler";
import type { WorkerService } from "@farm/worker";
import { withDeadline } from "@farm/time";
import { simChildDevices } from "./sim-child.ts";
import { benchLogLevel } from "./settings.ts";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const PYTHON = "/usr/bin/python3";
export const PYTHON_CLIENT_DIR = path.join(REPO, "clients/python");

export interface PolicyServerChild {
  url: string;
  child: ChildProcess;
  stats(): Promise<{ requests: number; batchRequests: number; stepItems: number; episodeEnds: number; returns: number[] }>;
  close(): Promise<void>;
}

/** `python3 -m farm_client.policy_server --port 0`; resolves with its URL once it listens. */
export async function startPythonPolicyServer(): Promise<PolicyServerChild> {
  const child = spawn(PYTHON, ["-m", "farm_client.policy_server", "--port", "0"], { cwd: PYTHON_CLIENT_DIR, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const listening = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) resolve(m[1]!);
    });
    void exited.then(() => reject(new Error(`python policy server exited early:\n${err}`)));
  });
  const url = await withDeadline(listening, 20_000, () => new Error(`python policy server did not start in 20 s:\n${err}`));
  return {
    url,
    child,
    async stats() {
      const r = await fetch(`${url}/stats`);
      return (await r.json()) as Awaited<ReturnType<PolicyServerChild["stats"]>>;
    },
    async close() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

export interface PolicyFarm {
  worker: WorkerService;
  scheduler: RunningScheduler;
  schedulerUrl: string;
  policyServer: PolicyServerChild;
  taskId: string;
  close(): Promise<void>;
}

export interface PolicyFarmOptions {
  devices: number;
  /** The worker's batch window (FARM_POLICY_BATCH_MS). */
  batchWindowMs?: number;
  settleMs?: number;
  logLevel?: string;
  /** How the policy gets the screen (FARM_POLICY_PIXELS). Default none: the reference agent does not look. */
  pixels?: "png" | "rgb" | "none";
}

export async function startPolicyFarm(o: PolicyFarmOptions): Promise<PolicyFarm> {
  const logger = createLogger({ service: "policy-farm", level: o.logLevel ?? benchLogLevel() });
  const tmp = mkdtempSync(path.join(os.tmpdir(), "farm-policy-"));
  let policyServer: PolicyServerChild | undefined;
  const farm = await startLocalFarm({
    // The policy server starts with the devices, so the worker finds it when it binds them.
    devices: async (adbPort) => {
      const sims = await simChildDevices(o.devices, "instant")(adbPort);
      policyServer = await startPythonPolicyServer().catch(async (e: unknown) => {
        await sims.close();
        throw e;
      });
      const server = policyServer;
      return { ...sims, close: async () => (await server.close(), await sims.close()) };
    },
    taskPaths: [path.join(REPO, "tasks/classic_2048.textproto")],
    outDir: path.join(tmp, "out"),
    queuePrefix: "{policy}",
    logger,
    worker: {
      episode: { settleMs: o.settleMs ?? 20 },
      policyPixels: o.pixels ?? "none",
      ...(o.batchWindowMs !== undefined ? { policyBatchWindowMs: o.batchWindowMs } : {}),
    },
    bindTimeoutMs: 180_000,
    scheduler: { http: true, tickMs: 100, windowSize: o.devices },
  }).catch((e: unknown) => {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  });
  const service = farm.schedulerService!;
  return {
    worker: farm.worker,
    scheduler: service,
    schedulerUrl: service.http.url,
    policyServer: policyServer!,
    taskId: "classic_2048",
    close: () => farm.close().finally(() => rmSync(tmp, { recursive: true, force: true })),
  };
}
