/**
 * A farm spread over the network lab: Redis in the hub namespace, each worker host (the real
 * WorkerService over FakeDevices: scale-host.ts) in its own namespace reaching Redis through its link and
 * a delay relay, and the scheduler in this process, reaching Redis over the control link, as a scheduler
 * on its own machine would. Used by `farm bench net`, `farm bench partition` and the lab's tests.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@farm/local-services";
import { createLogger } from "@farm/log";
import { createRedisClient, type RedisClient } from "@farm/queue";
import { Scheduler } from "@farm/scheduler";
import { loadTaskFile } from "@farm/task";
import { pollUntil, withDeadline } from "@farm/time";
import { fakeDeviceTask } from "../fake-device-task.ts";
import type { LabHost, LabRelay, NetLab } from "./lab.ts";
import { NetLabError } from "./netns.ts";
import { benchLogLevel } from "../settings.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../../..");
export const LAB_PREFIX_KEY = "{lab}";

export interface LabFarmOptions {
  devicesPerHost: number;
  /** Round trip added between every host and Redis (half each way). */
  rttMs: number;
  /** A device's time per step (an emulator's pace) and how much it varies (percent). */
  stepMs: number;
  jitterPct: number;
  /** Jobs' lock duration (and stalled-check interval) on the hosts; the worker's default when unset. */
  lockMs?: number;
  /** The hosts' log level (default warn; info shows `redis:up`). */
  hostLogLevel?: string;
  /** Window of jobs in flight (default: all devices). */
  window?: number;
  /**
   * Use this Redis (e.g. a lab cluster's `redis+cluster://…`, reachable by lab addresses from every
   * namespace) instead of starting one in the hub; the hosts connect to it directly, with no relay
   * (so `rttMs` does not apply and `redisRequests` counts nothing).
   */
  redisUrl?: string;
}

export interface LabWorkerHost {
  host: LabHost;
  name: string;
  out: string;
  relay: LabRelay;
  child: ChildProcess;
  /** The host's Redis outage lines (`redis:down`, `redis:up`, …), then the last 4 KB of its stderr. */
  log(): string;
}

/** A host's stand-in relay when it reaches a given Redis directly. */
const NO_RELAY: LabRelay = { port: 0, stats: async () => ({ connections: 0, requests: 0 }), close: () => undefined };

export class LabFarm {
  private constructor(
    readonly lab: NetLab,
    readonly scheduler: Scheduler,
    readonly redis: RedisClient,
    private readonly redisServer: ChildProcess | undefined,
    readonly taskId: string,
    readonly hosts: readonly LabWorkerHost[],
    private readonly tmp: string,
  ) {}

  static async start(lab: NetLab, opts: LabFarmOptions): Promise<LabFarm> {
    const tmp = mkdtempSync(path.join(os.tmpdir(), "farm-lab-"));
    const redisPort = opts.redisUrl === undefined ? await freePort() : 0;
    const redisServer = opts.redisUrl === undefined ? lab.spawn(lab.hub, "redis-server", ["--port", String(redisPort), "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no"]) : undefined;
    const redisUrl = opts.redisUrl ?? `redis://${lab.control.hubAddress}:${redisPort}`;
    const redis = createRedisClient(redisUrl);
    // Refusals until redis-server listens are expected; the poll below says when it does not.
    redis.on("error", () => undefined);
    const up = await pollUntil(() => withDeadline(redis.ping(), 1000, () => new Error("no answer")).then(() => true, () => false), { timeoutMs: 30_000, intervalMs: 100 });
    if (!up) throw new NetLabError(`redis-server did not answer in the lab's hub at ${redisUrl}`);
    const taskFile = fakeDeviceTask(tmp);
    const task = loadTaskFile(taskFile);
    const logger = createLogger({ service: "lab-scheduler", level: benchLogLevel() });
    const scheduler = await Scheduler.create({ redisUrl, prefix: LAB_PREFIX_KEY, taskPaths: [taskFile], windowSize: opts.window ?? opts.devicesPerHost * lab.hosts.length, log: logger });
    await scheduler.start();
    const hosts: LabWorkerHost[] = [];
    for (const host of lab.hosts) {
      const relay = opts.redisUrl === undefined ? await lab.relay(host, redisPort, opts.rttMs) : NO_RELAY;
      const hostUrl = opts.redisUrl ?? `redis://${host.hubAddress}:${relay.port}`;
      hosts.push(startHost(lab, host, relay, { ...opts, taskFile, out: path.join(tmp, `out-h${host.index}`), redisUrl: hostUrl }));
    }
    const farm = new LabFarm(lab, scheduler, redis, redisServer, task.task.id, hosts, tmp);
    await Promise.all(hosts.map((h) => farm.ready(h)));
    return farm;
  }

  private ready(h: LabWorkerHost): Promise<void> {
    return new Promise((resolve, reject) => {
      h.child.stdout!.on("data", (b: Buffer) => {
        if (b.toString().includes("ready")) resolve();
      });
      h.child.once("exit", (code) => reject(new NetLabError(`lab host ${h.name} exited (${code}) before its devices were bound:\n${h.log()}`)));
    });
  }

  /** Submits a campaign of `episodes` and waits until it is no longer running; its final status. */
  async runCampaign(id: string, episodes: number, maxSteps: number, timeoutMs = 1_800_000): Promise<Awaited<ReturnType<Scheduler["status"]>>> {
    await this.scheduler.submit({ id, taskId: this.taskId, policy: "random", episodes, options: { maxEpisodeSteps: maxSteps } });
    return this.waitFor(id, timeoutMs);
  }

  async waitFor(id: string, timeoutMs: number): Promise<Awaited<ReturnType<Scheduler["status"]>>> {
    let last: Awaited<ReturnType<Scheduler["status"]>> | undefined;
    // A status read fails while the scheduler's own link is cut: that is "not yet", not the end.
    const done = await pollUntil(async () => {
      last = await this.scheduler.status(id);
      return last.state !== "running" && last;
    }, { timeoutMs, intervalMs: 100, onError: () => (last = undefined) });
    if (!done) throw new NetLabError(`campaign ${id} not done after ${timeoutMs} ms: ${JSON.stringify(last)}`);
    return done;
  }

  /** Commands Redis has processed so far (INFO stats), the scheduler's included. */
  async redisCommands(): Promise<number> {
    const m = /^total_commands_processed:(\d+)/m.exec(await this.redis.info("stats"));
    return m ? Number(m[1]) : NaN;
  }

  /** Requests the hosts have sent Redis so far (their relays' count of client writes). */
  async redisRequests(): Promise<number> {
    const all = await Promise.all(this.hosts.map((h) => h.relay.stats()));
    return all.reduce((n, s) => n + s.requests, 0);
  }

  async close(): Promise<void> {
    for (const h of this.hosts) h.child.kill("SIGTERM");
    await Promise.all(this.hosts.map((h) => (h.child.exitCode !== null ? undefined : withDeadline(new Promise((r) => h.child.once("exit", r)), 20_000, () => new Error("host did not drain")).catch(() => h.child.kill("SIGKILL")))));
    for (const h of this.hosts) h.relay.close();
    await this.scheduler.close().catch(() => undefined);
    this.redis.disconnect();
    this.redisServer?.kill("SIGKILL");
    rmSync(this.tmp, { recursive: true, force: true });
  }
}

function startHost(lab: NetLab, host: LabHost, relay: LabRelay, o: LabFarmOptions & { taskFile: string; out: string; redisUrl: string }): LabWorkerHost {
  const name = `h${host.index}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    REDIS_URL: o.redisUrl,
    SCALE_PREFIX: LAB_PREFIX_KEY,
    SCALE_OUT: o.out,
    SCALE_TASK: o.taskFile,
    SCALE_HOST: name,
    SCALE_DEVICES: String(o.devicesPerHost),
    SCALE_STEP_MS: String(o.stepMs),
    SCALE_STEP_JITTER: String(o.jitterPct / 100),
    FARM_LOG_LEVEL: o.hostLogLevel ?? "warn",
    ...(o.lockMs ? { SCALE_LOCK_MS: String(o.lockMs) } : {}),
  };
  const child = lab.spawn(host.namespace, process.execPath, ["--import", "tsx", path.join(REPO, "loadtest/src/scale-host.ts")], { cwd: REPO, env });
  let tail = "";
  let partial = "";
  // Redis outage lines are kept whole (the partition checks read their times); the rest as a tail.
  const outages: string[] = [];
  child.stderr!.on("data", (b: Buffer) => {
    tail = (tail + b.toString()).slice(-4000);
    const lines = (partial + b.toString()).split("\n");
    partial = lines.pop() ?? "";
    for (const l of lines) if (l.includes('"event":"redis:') && outages.length < 200) outages.push(l);
  });
  return { host, name, out: o.out, relay, child, log: () => [...outages, tail].join("\n") };
}
