/**
 * The worker's one validated config, built once at start-up from flags (explicit values) over the
 * environment over defaults. Durations carry their unit in the name.
 */
import os from "node:os";
import path from "node:path";
import { DEFAULT_REDIS_URL, validateRedisUrl, resolveQueuePrefix } from "@farm/queue";
import type { GrpcEndpoint, GrpcMode, GrpcTransportConfig } from "@farm/adb";
import type { EpisodeConfig } from "@farm/episode";
import { hostAllowList } from "@farm/policy";
import type { CodecName } from "@farm/trajectory";
import { coerceError } from "@farm/errors";
import { launchConfig, type LaunchInput, type WorkerLaunchConfig } from "./launch-config.ts";

export interface WorkerConfigInput {
  /** redis:// URL. Env REDIS_URL. */
  redisUrl?: string;
  /** BullMQ prefix. Env FARM_QUEUE_PREFIX. Default `{farm}`. */
  queuePrefix?: string;
  /** adb server. Env FARM_ADB_HOST / FARM_ADB_PORT (then ANDROID_ADB_SERVER_PORT). Default 127.0.0.1:5037. */
  adbHost?: string;
  adbPort?: number;
  /** Serials to bind; empty or undefined = every device the adb server lists. Env FARM_DEVICES (comma-separated). */
  devices?: string[];
  /** Task files or folders. Env FARM_TASKS (comma-separated; the scheduler's name too; the old FARM_TASK_DIRS is still read, with a warning). Default ["tasks"]. */
  taskPaths?: string[];
  /** Extra APK folders for install steps. Env FARM_APK_DIRS. The `apks/` folder beside each task path is always searched. */
  apkDirs?: string[];
  /** Folder for `scripted:<name>` / `module:<name>` policies (names only, never paths). Env FARM_POLICY_DIR. */
  policyDir?: string;
  /** Hosts `http:` policies of jobs may reach besides loopback (libs/policy url-guard syntax). Env FARM_POLICY_ALLOWED_HOSTS. */
  policyAllowedHosts?: string[];
  /** Trajectory output folder. Env FARM_OUT_DIR. Default ./out/trajectories. */
  outDir?: string;
  codec?: CodecName;
  /** /metrics port; 0 = a free port. Env FARM_METRICS_PORT. Default 9465. */
  metricsPort?: number;
  /** /metrics bind address. Env FARM_METRICS_HOST. Default 127.0.0.1. */
  metricsHost?: string;
  /** Names this process in results and trajectories. Default <hostname>-<pid>. */
  workerName?: string;
  /** BullMQ lock of a running job; renewed every half. Default 30000. */
  lockDurationMs?: number;
  /** How often this worker looks for jobs whose lock expired (a dead worker's). Default 30000. */
  stalledIntervalMs?: number;
  /** On drain, how long a running episode may finish before it is cancelled and handed back. Default 60000. */
  drainTimeoutMs?: number;
  /** After a device became unusable, try to bind it again after this long (0 = only when it reappears). Default 60000. */
  unusableRetryMs?: number;
  /** How often files left pending by a crash or a lost lock are settled against the claims. Default 30000. */
  resolveIntervalMs?: number;
  /** Fault injection for the chaos bench (`crash-after-claim`, …). Env FARM_FAULT_INJECT. Off by default. */
  faultInject?: string;
  /** Runner settings (settleMs, stepTimeoutMs, …) for every session; a job's stepTimeoutMs overrides. */
  episode?: EpisodeConfig;
  /**
   * The emulator gRPC transport (actions and frames; steps and logcat stay on adb). Env FARM_GRPC = discover | config | off
   * (default discover: devices whose emulator wrote a discovery file with a gRPC port use it), FARM_GRPC_ENDPOINTS =
   * `serial=host:port[/token],…`, FARM_GRPC_DISCOVERY_DIR.
   */
  grpc?: GrpcTransportConfig;
  /**
   * Emulators this worker launches itself (default: none, attach to the adb server's devices). Env FARM_LAUNCH (count),
   * FARM_LAUNCH_AVD, FARM_EMULATOR (executable), FARM_LAUNCH_SNAPSHOT, FARM_LAUNCH_BOOT_TIMEOUT_MS.
   */
  launch?: LaunchInput;
  /** `http-batch:` policies: how long the first pending step waits for other devices' (ms, 0…1000). Env FARM_POLICY_BATCH_MS. Default 5. */
  policyBatchWindowMs?: number;
  /** `http-batch:` policies: a batch goes out at once with this many steps (1…4096). Env FARM_POLICY_MAX_BATCH. Default 64. */
  policyMaxBatch?: number;
  /** How remote (`http:`, `http-batch:`) policies get the screen: png, rgb (raw) or none (no pixels: a policy that needs none, and the benchmark). Env FARM_POLICY_PIXELS. Default png. */
  policyPixels?: "png" | "rgb" | "none";
  /** Serve remote environments (dm_env_rpc v1) on this port; undefined = off, 0 = a free port. Env FARM_ENV_PORT. */
  envPort?: number;
  /** Bind address of the remote-env server. Env FARM_ENV_HOST. Default 127.0.0.1 (beyond loopback a token is required). */
  envHost?: string;
  /** Token remote-env clients send as `authorization: Bearer <token>`. Env FARM_ENV_TOKEN. */
  envToken?: string;
  /** A world whose client is gone gives its device back after this long. Env FARM_ENV_IDLE_TIMEOUT_MS. Default 60000. */
  envIdleTimeoutMs?: number;
  /** How the scheduler reaches this worker's HTTP server (device screens), e.g. http://node-3:9465. Env FARM_WORKER_URL. Default: from the metrics bind. */
  advertiseUrl?: string;
  /** How often device heartbeats are written (TTL: 5×). Env FARM_HEARTBEAT_MS. Default 2000. */
  heartbeatMs?: number;
}

/** The remote-env server's settings (remote-env/env-server.ts), when it is on. */
export interface RemoteEnvConfig {
  port: number;
  host: string;
  token: string | undefined;
  idleTimeoutMs: number;
}

export interface WorkerConfig {
  redisUrl: string;
  queuePrefix: string;
  adbHost: string;
  adbPort: number;
  /** Undefined = all devices. */
  devices: string[] | undefined;
  taskPaths: string[];
  apkDirs: string[];
  policyDir: string | undefined;
  policyAllowedHosts: string[];
  outDir: string;
  codec: CodecName;
  metricsPort: number;
  metricsHost: string;
  workerName: string;
  lockDurationMs: number;
  stalledIntervalMs: number;
  drainTimeoutMs: number;
  unusableRetryMs: number;
  resolveIntervalMs: number;
  faultInject: string | undefined;
  episode: EpisodeConfig;
  grpc: GrpcTransportConfig;
  /** Undefined = launch nothing (attach only). */
  launch: WorkerLaunchConfig | undefined;
  policyBatchWindowMs: number;
  policyMaxBatch: number;
  policyPixels: "png" | "rgb" | "none";
  /** Undefined = no remote-env server. */
  remoteEnv: RemoteEnvConfig | undefined;
  advertiseUrl: string | undefined;
  heartbeatMs: number;
}

const list = (v: string | undefined): string[] | undefined =>
  v === undefined ? undefined : v.split(",").map((s) => s.trim()).filter((s) => s !== "");

function intIn(name: string, v: number | string | undefined, dflt: number, min: number, max: number): number {
  if (v === undefined || v === "") return dflt;
  const n = typeof v === "number" ? v : Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new RangeError(`worker config: ${name} must be an integer in ${min}..${max}, got '${String(v)}'`);
  return n;
}

let warnedTaskDirs = false;

/** FARM_TASKS, as the scheduler reads it; the worker's old name FARM_TASK_DIRS still works, with one warning. */
function envTaskPaths(env: NodeJS.ProcessEnv): string[] | undefined {
  if (env.FARM_TASKS !== undefined || env.FARM_TASK_DIRS === undefined) return list(env.FARM_TASKS);
  if (!warnedTaskDirs) {
    warnedTaskDirs = true;
    process.emitWarning("FARM_TASK_DIRS is deprecated; set FARM_TASKS (the same comma-separated task files or folders, as for the scheduler)", { code: "FARM_DEPRECATED_ENV" });
  }
  return list(env.FARM_TASK_DIRS);
}

/** The allow-list entries, parsed once here so a typo fails at start-up rather than per job. */
function checkedAllowList(entries: string[]): string[] {
  try {
    hostAllowList(entries);
  } catch (e) {
    throw new RangeError(`worker config: policyAllowedHosts: ${coerceError(e).message}`);
  }
  return entries;
}

function policyPixelsOf(v: string | undefined): "png" | "rgb" | "none" {
  if (v === undefined || v === "") return "png";
  if (v === "png" || v === "rgb" || v === "none") return v;
  throw new RangeError(`worker config: policyPixels (FARM_POLICY_PIXELS) must be png, rgb or none, got '${v.slice(0, 40)}'`);
}

/** Validates and fills defaults; throws with a message naming the bad setting. */
export function resolveWorkerConfig(input: WorkerConfigInput = {}, env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const redisUrl = input.redisUrl ?? env.REDIS_URL ?? DEFAULT_REDIS_URL;
  validateRedisUrl(redisUrl); // throws REDIS_URL_INVALID with a redacted message
  const devices = input.devices ?? list(env.FARM_DEVICES);
  const taskPaths = (input.taskPaths ?? envTaskPaths(env) ?? ["tasks"]).map((p) => path.resolve(p));
  if (taskPaths.length === 0) throw new RangeError("worker config: at least one task file or folder is needed");
  const codec = input.codec ?? ((env.FARM_TRAJECTORY_CODEC as CodecName | undefined) || "deflate");
  if (!["null", "deflate", "snappy"].includes(codec)) throw new RangeError(`worker config: codec must be null, deflate or snappy, got '${codec}'`);
  const lockDurationMs = intIn("lockDurationMs", input.lockDurationMs, 30_000, 1_000, 3_600_000);
  const policyDir = input.policyDir ?? env.FARM_POLICY_DIR;
  return {
    redisUrl,
    queuePrefix: resolveQueuePrefix(input.queuePrefix, env),
    adbHost: input.adbHost ?? env.FARM_ADB_HOST ?? "127.0.0.1",
    adbPort: intIn("adbPort", input.adbPort ?? env.FARM_ADB_PORT ?? env.ANDROID_ADB_SERVER_PORT, 5037, 1, 65_535),
    devices: devices && devices.length > 0 ? devices : undefined,
    taskPaths,
    apkDirs: (input.apkDirs ?? list(env.FARM_APK_DIRS) ?? []).map((p) => path.resolve(p)),
    policyDir: policyDir ? path.resolve(policyDir) : undefined,
    policyAllowedHosts: checkedAllowList(input.policyAllowedHosts ?? list(env.FARM_POLICY_ALLOWED_HOSTS) ?? []),
    outDir: path.resolve(input.outDir ?? env.FARM_OUT_DIR ?? "out/trajectories"),
    codec,
    metricsPort: intIn("metricsPort", input.metricsPort ?? env.FARM_METRICS_PORT, 9465, 0, 65_535),
    metricsHost: input.metricsHost ?? env.FARM_METRICS_HOST ?? "127.0.0.1",
    workerName: (input.workerName ?? `${os.hostname()}-${process.pid}`).slice(0, 256),
    lockDurationMs,
    stalledIntervalMs: intIn("stalledIntervalMs", input.stalledIntervalMs, 30_000, 500, 3_600_000),
    drainTimeoutMs: intIn("drainTimeoutMs", input.drainTimeoutMs, 60_000, 0, 86_400_000),
    unusableRetryMs: intIn("unusableRetryMs", input.unusableRetryMs, 60_000, 0, 86_400_000),
    resolveIntervalMs: intIn("resolveIntervalMs", input.resolveIntervalMs, 30_000, 100, 86_400_000),
    faultInject: input.faultInject ?? (env.FARM_FAULT_INJECT || undefined),
    episode: { ...input.episode },
    grpc: grpcConfig(input.grpc, env),
    launch: launchConfig(input.launch, env),
    policyBatchWindowMs: intIn("policyBatchWindowMs", input.policyBatchWindowMs ?? env.FARM_POLICY_BATCH_MS, 5, 0, 1000),
    policyMaxBatch: intIn("policyMaxBatch", input.policyMaxBatch ?? env.FARM_POLICY_MAX_BATCH, 64, 1, 4096),
    policyPixels: policyPixelsOf(input.policyPixels ?? env.FARM_POLICY_PIXELS),
    remoteEnv: remoteEnvConfig(input, env),
    advertiseUrl: checkedAdvertiseUrl(input.advertiseUrl ?? (env.FARM_WORKER_URL || undefined)),
    heartbeatMs: intIn("heartbeatMs", input.heartbeatMs ?? env.FARM_HEARTBEAT_MS, 2000, 100, 60_000),
  };
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

function remoteEnvConfig(input: WorkerConfigInput, env: NodeJS.ProcessEnv): RemoteEnvConfig | undefined {
  const rawPort = input.envPort ?? (env.FARM_ENV_PORT || undefined);
  if (rawPort === undefined) return undefined;
  const port = intIn("envPort (FARM_ENV_PORT)", rawPort, 0, 0, 65_535);
  const host = input.envHost ?? (env.FARM_ENV_HOST || "127.0.0.1");
  const token = input.envToken ?? (env.FARM_ENV_TOKEN || undefined);
  if (!LOOPBACK.has(host) && !token) throw new RangeError(`worker config: the remote-env server binds ${host}, beyond loopback: set a token (FARM_ENV_TOKEN or --env-token) that clients send as 'authorization: Bearer <token>'`);
  if (token !== undefined && !/^[\x21-\x7e]{16,512}$/.test(token)) throw new RangeError("worker config: the remote-env token (FARM_ENV_TOKEN) must be 16-512 printable characters without spaces");
  const idleTimeoutMs = intIn("envIdleTimeoutMs (FARM_ENV_IDLE_TIMEOUT_MS)", input.envIdleTimeoutMs ?? env.FARM_ENV_IDLE_TIMEOUT_MS, 60_000, 100, 86_400_000);
  return { port, host, token, idleTimeoutMs };
}

/** `serial=host:port[/token]` items, comma-separated. */
function parseEndpoints(text: string): Record<string, GrpcEndpoint> {
  const out: Record<string, GrpcEndpoint> = {};
  for (const item of text.split(",").map((s) => s.trim()).filter(Boolean)) {
    const m = /^([A-Za-z0-9._:-]{1,128})=([A-Za-z0-9.\-]+:\d{1,5})(?:\/(\S{1,512}))?$/.exec(item);
    if (!m) throw new RangeError(`worker config: FARM_GRPC_ENDPOINTS item '${item.slice(0, 80)}' must be serial=host:port or serial=host:port/token`);
    out[m[1]!] = { address: m[2]!, ...(m[3] ? { token: m[3] } : {}) };
  }
  return out;
}

function grpcConfig(input: GrpcTransportConfig | undefined, env: NodeJS.ProcessEnv): GrpcTransportConfig {
  const mode = input?.mode ?? ((env.FARM_GRPC || "discover") as GrpcMode);
  if (!["off", "config", "discover"].includes(mode)) throw new RangeError(`worker config: grpc mode (FARM_GRPC) must be discover, config or off, got '${mode}'`);
  const endpoints = input?.endpoints ?? (env.FARM_GRPC_ENDPOINTS ? parseEndpoints(env.FARM_GRPC_ENDPOINTS) : undefined);
  const discoveryDir = input?.discoveryDir ?? env.FARM_GRPC_DISCOVERY_DIR;
  return { mode, ...(endpoints ? { endpoints } : {}), ...(discoveryDir ? { discoveryDir } : {}), ...(input?.callTimeoutMs !== undefined ? { callTimeoutMs: input.callTimeoutMs } : {}) };
}

/** FARM_WORKER_URL: an http(s) base URL without credentials, query or fragment. */
function checkedAdvertiseUrl(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  let u: URL | undefined;
  try {
    u = new URL(v);
  } catch {
    u = undefined;
  }
  if (!u || !/^https?:$/.test(u.protocol) || u.username || u.password || u.search || u.hash) {
    throw new RangeError(`worker config: FARM_WORKER_URL '${v.slice(0, 100)}' must be an http(s) base URL like http://node-3:9465 (no credentials, query or fragment)`);
  }
  return u.href.replace(/\/$/, "");
}
