/**
 * A whole farm on this machine: Redis (a private one unless given a URL), a private adb server, devices
 * (simulated ones in this process unless the caller brings its own, e.g. in a child process), one worker host
 * binding all of them, and the scheduler (in this process, or the service with its HTTP API). Everything it
 * starts goes on one Releasers stack: `close()` releases it in reverse order, and a start that fails half-way
 * releases what it had started before rethrowing.
 */
import { Releasers } from "@farm/lifecycle";
import { startAdbServer, startRedis } from "@farm/local-services";
import type { Logger } from "@farm/log";
import { loadSchedulerConfig, runScheduler, Scheduler, type RunningScheduler } from "@farm/scheduler";
import { startSimulatedDevices } from "@farm/simulator";
import { resolveWorkerConfig, WorkerService, type WorkerConfigInput } from "@farm/worker";
import { sleep } from "@farm/time";

export interface LocalDevices {
  serials: string[];
  /** serial → the device's emulator gRPC endpoint; the worker then sends actions and takes frames over gRPC. */
  grpcEndpoints?: Record<string, { address: string }>;
  close(): Promise<void>;
}

/** Starts devices registered with the adb server on `adbPort`; resolves once all are online. */
export type LocalDeviceSource = (adbPort: number) => Promise<LocalDevices>;

type OwnWorkerSettings = "redisUrl" | "queuePrefix" | "adbPort" | "devices" | "taskPaths" | "outDir";

export interface LocalFarmOptions {
  /** How many simulated devices to start in this process, or a source of devices of the caller's own. */
  devices: number | LocalDeviceSource;
  taskPaths: string[];
  /** The worker's trajectory folder. */
  outDir: string;
  /** BullMQ prefix of this farm's queues: a farm on a shared Redis never hands jobs to other workers. */
  queuePrefix: string;
  logger: Logger;
  /** Use this Redis instead of starting a private one. */
  redisUrl?: string;
  /** Worker settings beyond the farm's own (default: metrics on a free port, a 10 s drain). */
  worker?: Omit<WorkerConfigInput, OwnWorkerSettings>;
  /** The environment the worker's config reads (default: the worker's own default, the process environment). */
  environment?: Record<string, string | undefined>;
  /** Wait for every device to be bound (setup done) before returning, at most this long. Default 0: do not wait. */
  bindTimeoutMs?: number;
  /** `http: true` runs the scheduler service with its HTTP API on a free loopback port (own /metrics). */
  scheduler?: { windowSize?: number; tickMs?: number; http?: boolean; token?: string; operatorTokens?: string };
  /** Told what started, in order: `("redis", "started on port 6390")`. */
  onStarted?(what: string, detail: string): void;
}

export interface LocalFarm {
  redisUrl: string;
  adbPort: number;
  serials: string[];
  grpcEndpoints: Record<string, { address: string }>;
  worker: WorkerService;
  scheduler: Scheduler;
  /** With `scheduler.http`: the running service (its API at `schedulerService.http.url`). */
  schedulerService?: RunningScheduler;
  /** The farm's release stack; callers may add their own steps (released first). */
  releasers: Releasers;
  /** Releases everything, last started first; throws naming every step that failed. Idempotent. */
  close(): Promise<void>;
}

/** A local farm without its scheduler: the caller runs one elsewhere (e.g. a `farm scheduler` child process). */
export type LocalWorkerFarm = Omit<LocalFarm, "scheduler" | "schedulerService">;

/** Redis, the adb server, the devices and the worker host of startLocalFarm, without a scheduler. */
export async function startLocalWorkerFarm(o: Omit<LocalFarmOptions, "scheduler">): Promise<LocalWorkerFarm> {
  const releasers = new Releasers();
  const told = o.onStarted ?? (() => undefined);
  try {
    const redisUrl = await redisFor(o, releasers, told);
    const adb = await startAdbServer();
    releasers.add("adb server", () => adb.close());
    told("adb server", `started on port ${adb.port}`);
    const devices = await (typeof o.devices === "number" ? simulatedDevices(o.devices) : o.devices)(adb.port);
    releasers.add("devices", () => devices.close());
    told("devices", devices.serials.join(", "));
    const grpcEndpoints = devices.grpcEndpoints ?? {};
    const worker = await startWorker(o, { redisUrl, adbPort: adb.port, serials: devices.serials, grpcEndpoints }, releasers);
    told("worker", `binding ${devices.serials.length} devices; /metrics at ${worker.metricsUrl}/metrics`);
    if (o.bindTimeoutMs) await waitUntilBound(worker, devices.serials.length, o.bindTimeoutMs);
    return { redisUrl, adbPort: adb.port, serials: devices.serials, grpcEndpoints, worker, releasers, close: () => releasers.releaseAllOrThrow() };
  } catch (e) {
    await releaseAfterFailedStart(o, releasers);
    throw e;
  }
}

export async function startLocalFarm(o: LocalFarmOptions): Promise<LocalFarm> {
  const farm = await startLocalWorkerFarm(o);
  try {
    const { scheduler, service } = await startScheduler(o, farm.redisUrl, farm.worker, farm.releasers);
    (o.onStarted ?? (() => undefined))("scheduler", service ? `API at ${service.http.url}` : "in this process");
    return { ...farm, scheduler, ...(service ? { schedulerService: service } : {}) };
  } catch (e) {
    await releaseAfterFailedStart(o, farm.releasers);
    throw e;
  }
}

async function releaseAfterFailedStart(o: Pick<LocalFarmOptions, "logger">, releasers: Releasers): Promise<void> {
  await releasers.releaseAll({ onError: ({ what, error }) => o.logger.warn({ event: "local-farm:release-failed", what, err: error.message }, "release failed") });
}

async function redisFor(o: Pick<LocalFarmOptions, "redisUrl">, releasers: Releasers, told: (what: string, detail: string) => void): Promise<string> {
  if (o.redisUrl) return o.redisUrl;
  const redis = await startRedis();
  releasers.add("redis", () => redis.close());
  told("redis", `started on port ${redis.port}`);
  return redis.url;
}

function simulatedDevices(count: number): LocalDeviceSource {
  return async (adbPort) => {
    const fleet = await startSimulatedDevices({ adbPort, count });
    return { serials: fleet.devices.map((d) => d.serial), close: () => fleet.close() };
  };
}

interface FarmParts {
  redisUrl: string;
  adbPort: number;
  serials: string[];
  grpcEndpoints: Record<string, { address: string }>;
}

async function startWorker(o: Omit<LocalFarmOptions, "scheduler">, p: FarmParts, releasers: Releasers): Promise<WorkerService> {
  const hasGrpc = Object.keys(p.grpcEndpoints).length > 0;
  const config = resolveWorkerConfig(
    {
      metricsPort: 0,
      drainTimeoutMs: 10_000,
      ...(hasGrpc ? { grpc: { mode: "config", endpoints: p.grpcEndpoints } } : {}),
      ...o.worker,
      redisUrl: p.redisUrl,
      queuePrefix: o.queuePrefix,
      adbPort: p.adbPort,
      devices: p.serials,
      taskPaths: o.taskPaths,
      outDir: o.outDir,
    },
    ...(o.environment ? [o.environment] : []),
  );
  const worker = await WorkerService.create(config, { logger: o.logger });
  releasers.add("worker", () => worker.close());
  await worker.start();
  return worker;
}

async function waitUntilBound(worker: WorkerService, count: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const ready = () => Object.values(worker.deviceStates()).filter((s) => s === "ready").length;
  while (ready() < count) {
    if (Date.now() > deadline) throw new Error(`local farm: ${ready()} of ${count} devices bound after ${timeoutMs / 1000} s: ${JSON.stringify(worker.deviceStates())}`);
    await sleep(100);
  }
}

async function startScheduler(o: LocalFarmOptions, redisUrl: string, worker: WorkerService, releasers: Releasers): Promise<{ scheduler: Scheduler; service?: RunningScheduler }> {
  const s = o.scheduler ?? {};
  if (s.http) {
    const flags = { redisUrl, prefix: o.queuePrefix, port: 0, tasks: o.taskPaths, trajectories: [o.outDir], ...(s.tickMs ? { tickMs: s.tickMs } : {}), ...(s.windowSize ? { windowSize: s.windowSize } : {}), ...(s.token ? { token: s.token } : {}), ...(s.operatorTokens ? { operatorTokens: s.operatorTokens } : {}) };
    const service = await runScheduler(loadSchedulerConfig(flags, {}), { log: o.logger });
    releasers.add("scheduler", () => service.close());
    return { scheduler: service.scheduler, service };
  }
  // In this process the scheduler's metrics join the worker's registry: one /metrics shows both.
  const scheduler = await Scheduler.create({ redisUrl, prefix: o.queuePrefix, taskPaths: o.taskPaths, windowSize: s.windowSize, tickMs: s.tickMs, log: o.logger, metrics: worker.metrics });
  releasers.add("scheduler", () => scheduler.close());
  await scheduler.start();
  return { scheduler };
}
