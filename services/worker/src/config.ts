/**
 * The worker's one validated config, built once at start-up from flags (explicit values) over the
 * environment over defaults. Durations carry their unit in the name.
 */
import os from "node:os";
import path from "node:path";
import { SettingsReader, type Environment } from "@farm/config";
import { discoveryDirectory } from "@farm/emulator-grpc";
import { DEFAULT_QUEUE_PREFIX, DEFAULT_REDIS_URL, DEFAULT_STREAM_MAXLEN, DEFAULT_STREAM_MAX_AGE_MS, validateRedisUrl, resolveQueuePrefix } from "@farm/queue";
import type { GrpcEndpoint, GrpcMode, GrpcTransportConfig } from "@farm/adb";
import type { EpisodeConfig } from "@farm/episode";
import { LOG_LEVELS, type LogLevel } from "@farm/log";
import { DEFAULT_LLM_KEY_HOSTS, hostAllowList, LLM_API_KEY_ENV, LLM_KEY_HOSTS_ENV, llmApiKeyProblem, parseKeyHosts } from "@farm/policy";
import type { CodecName } from "@farm/trajectory";
import { launchConfig, type LaunchInput, type WorkerLaunchConfig } from "./launch-config.ts";
import { treesConfig, type DeviceTreesConfig, type TreeSourceSetting } from "./trees-config.ts";

export interface WorkerConfigInput {
  /** redis:// URL. Env REDIS_URL. */
  redisUrl?: string;
  /** BullMQ prefix. Env FARM_QUEUE_PREFIX. Default `{farm}`. */
  queuePrefix?: string;
  /** The committed-episodes stream's bounds per campaign (issue 38): entries (MAXLEN ~; 0 = none) and age. Env FARM_STREAM_MAXLEN, FARM_STREAM_MAX_AGE_SEC. */
  streamMaxLen?: number;
  streamMaxAgeSec?: number;
  /** adb server. Env FARM_ADB_HOST / FARM_ADB_PORT (then ANDROID_ADB_SERVER_PORT). Default 127.0.0.1:5037. */
  adbHost?: string;
  adbPort?: number;
  /** The `adb` executable (console commands: snapshots without gRPC). Env ADB_BIN. Default `adb`. */
  adbBin?: string;
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
  /** Hosts a family's task server (outside task code, libs/task-protocol) may be on besides loopback. Env FARM_TASK_SERVER_ALLOWED_HOSTS. */
  taskServerAllowedHosts?: string[];
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
  /** Serve devices as OpenEnv environments (HTTP + WebSocket /ws) on this port; undefined = off, 0 = a free port. Env FARM_OPENENV_PORT. */
  openenvPort?: number;
  /** Bind address of the OpenEnv server. Env FARM_OPENENV_HOST. Default 127.0.0.1 (beyond loopback a token is required). */
  openenvHost?: string;
  /** Token OpenEnv clients send as `Authorization: Bearer <token>` on the WebSocket upgrade. Env FARM_OPENENV_TOKEN. */
  openenvToken?: string;
  /** A session with no message for this long ends and gives its device back. Env FARM_OPENENV_IDLE_TIMEOUT_MS. Default 300000. */
  openenvIdleTimeoutMs?: number;
  /** Most OpenEnv sessions at once (each holds a device). Env FARM_OPENENV_MAX_SESSIONS. Default 64. */
  openenvMaxSessions?: number;
  /** The task (or family) id a reset without `task` runs. Env FARM_OPENENV_TASK. Default: none (`task` required). */
  openenvTask?: string;
  /** How the scheduler reaches this worker's HTTP server (device screens), e.g. http://node-3:9465. Env FARM_WORKER_URL. Default: from the metrics bind. */
  advertiseUrl?: string;
  /** How often device heartbeats are written (TTL: 5×). Env FARM_HEARTBEAT_MS. Default 2000. */
  heartbeatMs?: number;
  /** `human` episodes: the fastest the screen is looked at for the operator's page (ms). Env FARM_OPERATOR_FRAME_MS. Default 33. */
  operatorFrameMs?: number;
  /**
   * Where screen trees come from: `uiautomator` (default: `uiautomator dump`), `forwarder` (AndroidEnv's
   * accessibility forwarder on every device, installed from `forwarderApk` where missing; uiautomator where it
   * cannot be had) or `auto` (the forwarder where the device has it). Env FARM_TREES.
   */
  trees?: TreeSourceSetting;
  /** The forwarder APK `trees: forwarder` installs on a device without it. Env FARM_FORWARDER_APK. Default: tasks/apks/accessibility_forwarder.apk of this checkout. */
  forwarderApk?: string;
  /** How long a device's forwarder stream may take after the enabling broadcasts (100…120000). Env FARM_FORWARDER_CONNECT_MS. Default 5000. */
  forwarderConnectMs?: number;
  /** trace … fatal, or silent. Env FARM_LOG_LEVEL. Default info. */
  logLevel?: LogLevel;
}

/** The OpenEnv server's settings (openenv/server.ts), when it is on. */
export interface OpenEnvConfig {
  port: number;
  host: string;
  token: string | undefined;
  idleTimeoutMs: number;
  maxSessions: number;
  /** The task a reset without `task` runs. */
  defaultTask: string | undefined;
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
  streamMaxLen: number;
  streamMaxAgeSec: number;
  adbHost: string;
  adbPort: number;
  adbBin: string;
  /** Undefined = all devices. */
  devices: string[] | undefined;
  taskPaths: string[];
  apkDirs: string[];
  policyDir: string | undefined;
  policyAllowedHosts: string[];
  taskServerAllowedHosts: string[];
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
  /** Bearer token for `llm:` policies' model servers. Env FARM_LLM_API_KEY only (a flag shows in `ps`); never logged. */
  llmApiKey: string | undefined;
  /** The only hosts `llmApiKey` is sent to (exact names or addresses, never `*`; https unless loopback). Env FARM_LLM_KEY_HOSTS; default loopback. */
  llmKeyHosts: readonly string[];
  /** Undefined = no remote-env server. */
  remoteEnv: RemoteEnvConfig | undefined;
  /** Undefined = no OpenEnv server. */
  openEnv: OpenEnvConfig | undefined;
  advertiseUrl: string | undefined;
  heartbeatMs: number;
  /** The relay of `human` episodes (operator-relay.ts). */
  operatorRelay: { frameIntervalMs: number };
  /** Where screen trees come from (a11y-trees.ts). */
  a11y: DeviceTreesConfig;
  logLevel: LogLevel;
}

const CODECS = ["null", "deflate", "snappy"] as const satisfies readonly CodecName[];
const POLICY_PIXELS = ["png", "rgb", "none"] as const;

let warnedTaskDirs = false;

/** FARM_TASKS, as the scheduler reads it; the worker's old name FARM_TASK_DIRS still works, with one warning. */
function taskPathsOf(r: SettingsReader, flag: string[] | undefined): string[] {
  const oldName = flag === undefined && r.envValue("FARM_TASKS") === undefined ? r.envValue("FARM_TASK_DIRS") : undefined;
  if (oldName !== undefined && !warnedTaskDirs) {
    warnedTaskDirs = true;
    process.emitWarning("FARM_TASK_DIRS is deprecated; set FARM_TASKS (the same comma-separated task files or folders, as for the scheduler)", { code: "FARM_DEPRECATED_ENV" });
  }
  const paths = r.list("taskPaths", { flag: flag ?? oldName, env: "FARM_TASKS", default: ["tasks"] });
  if (paths.length === 0) r.fail("taskPaths (FARM_TASKS)", "needs at least one task file or folder");
  return paths.map((p) => path.resolve(p));
}

/** Validates and fills defaults; throws ConfigError naming the bad setting and its environment variable. */
export function resolveWorkerConfig(input: WorkerConfigInput = {}, env: Environment = process.env): WorkerConfig {
  const r = new SettingsReader("worker", env);
  const devices = r.list("devices", { flag: input.devices, env: "FARM_DEVICES", default: undefined });
  const policyDir = r.string("policyDir", { flag: input.policyDir, env: "FARM_POLICY_DIR", default: undefined });
  const ms = (name: keyof WorkerConfigInput & `${string}Ms`, dflt: number, min: number, max: number) => r.int(name, { flag: input[name] as number | undefined, default: dflt, min, max });
  return {
    redisUrl: r.check("redisUrl", "REDIS_URL", r.string("redisUrl", { flag: input.redisUrl, env: "REDIS_URL", default: DEFAULT_REDIS_URL }), validateRedisUrl),
    queuePrefix: r.check("queuePrefix", "FARM_QUEUE_PREFIX", r.string("queuePrefix", { flag: input.queuePrefix, env: "FARM_QUEUE_PREFIX", default: DEFAULT_QUEUE_PREFIX }), resolveQueuePrefix),
    adbHost: r.string("adbHost", { flag: input.adbHost, env: "FARM_ADB_HOST", default: "127.0.0.1" }),
    // FARM_ADB_PORT, else the adb tools' own ANDROID_ADB_SERVER_PORT, else adb's 5037.
    adbPort: r.int("adbPort", { flag: input.adbPort, env: "FARM_ADB_PORT", default: r.int("adbPort", { env: "ANDROID_ADB_SERVER_PORT", default: 5037, min: 1, max: 65_535 }), min: 1, max: 65_535 }),
    adbBin: r.string("adbBin", { flag: input.adbBin, env: "ADB_BIN", default: "adb" }),
    devices: devices && devices.length > 0 ? devices : undefined,
    taskPaths: taskPathsOf(r, input.taskPaths),
    apkDirs: r.list("apkDirs", { flag: input.apkDirs, env: "FARM_APK_DIRS", default: [] }).map((p) => path.resolve(p)),
    policyDir: policyDir ? path.resolve(policyDir) : undefined,
    policyAllowedHosts: r.check("policyAllowedHosts", "FARM_POLICY_ALLOWED_HOSTS", r.list("policyAllowedHosts", { flag: input.policyAllowedHosts, env: "FARM_POLICY_ALLOWED_HOSTS", default: [] }), hostAllowList),
    taskServerAllowedHosts: r.check("taskServerAllowedHosts", "FARM_TASK_SERVER_ALLOWED_HOSTS", r.list("taskServerAllowedHosts", { flag: input.taskServerAllowedHosts, env: "FARM_TASK_SERVER_ALLOWED_HOSTS", default: [] }), hostAllowList),
    outDir: path.resolve(r.string("outDir", { flag: input.outDir, env: "FARM_OUT_DIR", default: "out/trajectories" })),
    codec: r.oneOf("codec", CODECS, { flag: input.codec, env: "FARM_TRAJECTORY_CODEC", default: "deflate" }),
    streamMaxLen: r.int("streamMaxLen", { flag: input.streamMaxLen, env: "FARM_STREAM_MAXLEN", default: DEFAULT_STREAM_MAXLEN, min: 0, max: 100_000_000 }),
    streamMaxAgeSec: r.int("streamMaxAgeSec", { flag: input.streamMaxAgeSec, env: "FARM_STREAM_MAX_AGE_SEC", default: DEFAULT_STREAM_MAX_AGE_MS / 1000, min: 0, max: 365 * 24 * 3600 }),
    metricsPort: r.int("metricsPort", { flag: input.metricsPort, env: "FARM_METRICS_PORT", default: 9465, min: 0, max: 65_535 }),
    metricsHost: r.string("metricsHost", { flag: input.metricsHost, env: "FARM_METRICS_HOST", default: "127.0.0.1" }),
    workerName: (input.workerName ?? `${os.hostname()}-${process.pid}`).slice(0, 256),
    lockDurationMs: ms("lockDurationMs", 30_000, 1_000, 3_600_000),
    stalledIntervalMs: ms("stalledIntervalMs", 30_000, 500, 3_600_000),
    drainTimeoutMs: ms("drainTimeoutMs", 60_000, 0, 86_400_000),
    unusableRetryMs: ms("unusableRetryMs", 60_000, 0, 86_400_000),
    resolveIntervalMs: ms("resolveIntervalMs", 30_000, 100, 86_400_000),
    faultInject: r.string("faultInject", { flag: input.faultInject, env: "FARM_FAULT_INJECT", default: undefined }),
    // policyTimeoutMs 0: each policy's own need (Policy.actDeadlineMs), else 30 s; a campaign's overrides either.
    episode: { ...input.episode, policyTimeoutMs: r.int("policyTimeoutMs", { flag: input.episode?.policyTimeoutMs, env: "FARM_POLICY_TIMEOUT_MS", default: 0, min: 0, max: 3_600_000 }) },
    grpc: grpcConfig(r, input.grpc),
    launch: launchConfig(r, input.launch),
    policyBatchWindowMs: r.int("policyBatchWindowMs", { flag: input.policyBatchWindowMs, env: "FARM_POLICY_BATCH_MS", default: 5, min: 0, max: 1000 }),
    policyMaxBatch: r.int("policyMaxBatch", { flag: input.policyMaxBatch, env: "FARM_POLICY_MAX_BATCH", default: 64, min: 1, max: 4096 }),
    policyPixels: r.oneOf("policyPixels", POLICY_PIXELS, { flag: input.policyPixels, env: "FARM_POLICY_PIXELS", default: "png" }),
    llmApiKey: llmApiKey(r),
    llmKeyHosts: r.check("llmKeyHosts", LLM_KEY_HOSTS_ENV, r.list("llmKeyHosts", { env: LLM_KEY_HOSTS_ENV, default: [...DEFAULT_LLM_KEY_HOSTS] }), parseKeyHosts),
    remoteEnv: remoteEnvConfig(r, input),
    openEnv: openEnvConfig(r, input),
    advertiseUrl: r.check("advertiseUrl", "FARM_WORKER_URL", r.string("advertiseUrl", { flag: input.advertiseUrl, env: "FARM_WORKER_URL", default: undefined }), checkAdvertiseUrl)?.replace(/\/$/, ""),
    heartbeatMs: r.int("heartbeatMs", { flag: input.heartbeatMs, env: "FARM_HEARTBEAT_MS", default: 2000, min: 100, max: 60_000 }),
    operatorRelay: { frameIntervalMs: r.int("operatorFrameMs", { flag: input.operatorFrameMs, env: "FARM_OPERATOR_FRAME_MS", default: 33, min: 5, max: 10_000 }) },
    a11y: treesConfig(r, input),
    logLevel: r.oneOf("logLevel", LOG_LEVELS, { flag: input.logLevel, env: "FARM_LOG_LEVEL", default: "info" }),
  };
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

function llmApiKey(r: SettingsReader): string | undefined {
  const key = r.string("llmApiKey", { env: LLM_API_KEY_ENV, default: undefined });
  const problem = key === undefined ? undefined : llmApiKeyProblem(key);
  if (problem) r.fail(`llmApiKey (${LLM_API_KEY_ENV})`, problem);
  return key;
}

function remoteEnvConfig(r: SettingsReader, input: WorkerConfigInput): RemoteEnvConfig | undefined {
  const port = r.int("envPort", { flag: input.envPort, env: "FARM_ENV_PORT", default: -1, min: 0, max: 65_535 });
  if (port === -1) return undefined;
  const host = r.string("envHost", { flag: input.envHost, env: "FARM_ENV_HOST", default: "127.0.0.1" });
  const token = r.string("envToken", { flag: input.envToken, env: "FARM_ENV_TOKEN", default: undefined });
  if (!LOOPBACK.has(host) && !token) r.fail("envHost (FARM_ENV_HOST)", `is ${host}, beyond loopback: set a token (FARM_ENV_TOKEN or --env-token) that clients send as 'authorization: Bearer <token>'`);
  if (token !== undefined && !/^[\x21-\x7e]{16,512}$/.test(token)) r.fail("envToken (FARM_ENV_TOKEN)", "must be 16-512 printable characters without spaces");
  const idleTimeoutMs = r.int("envIdleTimeoutMs", { flag: input.envIdleTimeoutMs, env: "FARM_ENV_IDLE_TIMEOUT_MS", default: 60_000, min: 100, max: 86_400_000 });
  return { port, host, token, idleTimeoutMs };
}

function openEnvConfig(r: SettingsReader, input: WorkerConfigInput): OpenEnvConfig | undefined {
  const port = r.int("openenvPort", { flag: input.openenvPort, env: "FARM_OPENENV_PORT", default: -1, min: 0, max: 65_535 });
  if (port === -1) return undefined;
  const host = r.string("openenvHost", { flag: input.openenvHost, env: "FARM_OPENENV_HOST", default: "127.0.0.1" });
  const token = r.string("openenvToken", { flag: input.openenvToken, env: "FARM_OPENENV_TOKEN", default: undefined });
  if (!LOOPBACK.has(host) && !token) r.fail("openenvHost (FARM_OPENENV_HOST)", `is ${host}, beyond loopback: set a token (FARM_OPENENV_TOKEN or --openenv-token) that clients send as 'Authorization: Bearer <token>'`);
  if (token !== undefined && !/^[\x21-\x7e]{16,512}$/.test(token)) r.fail("openenvToken (FARM_OPENENV_TOKEN)", "must be 16-512 printable characters without spaces");
  const idleTimeoutMs = r.int("openenvIdleTimeoutMs", { flag: input.openenvIdleTimeoutMs, env: "FARM_OPENENV_IDLE_TIMEOUT_MS", default: 300_000, min: 100, max: 86_400_000 });
  const maxSessions = r.int("openenvMaxSessions", { flag: input.openenvMaxSessions, env: "FARM_OPENENV_MAX_SESSIONS", default: 64, min: 1, max: 4096 });
  const defaultTask = r.string("openenvTask", { flag: input.openenvTask, env: "FARM_OPENENV_TASK", default: undefined });
  return { port, host, token, idleTimeoutMs, maxSessions, defaultTask };
}

/** `serial=host:port[/token]` items, comma-separated. Own properties only (fromEntries): a serial `__proto__` stays a key. */
function parseEndpoints(r: SettingsReader, text: string): Record<string, GrpcEndpoint> {
  const out: [string, GrpcEndpoint][] = [];
  for (const item of text.split(",").map((s) => s.trim()).filter(Boolean)) {
    const m = /^([A-Za-z0-9._:-]{1,128})=([A-Za-z0-9.\-]+:\d{1,5})(?:\/(\S{1,512}))?$/.exec(item);
    if (!m) r.fail("grpc endpoints (FARM_GRPC_ENDPOINTS)", `item '${item.slice(0, 80)}' must be serial=host:port or serial=host:port/token`);
    out.push([m[1]!, { address: m[2]!, ...(m[3] ? { token: m[3] } : {}) }]);
  }
  return Object.fromEntries(out);
}

function grpcConfig(r: SettingsReader, input: GrpcTransportConfig | undefined): GrpcTransportConfig {
  const mode = r.oneOf("grpc mode", ["discover", "config", "off"] as const satisfies readonly GrpcMode[], { flag: input?.mode, env: "FARM_GRPC", default: "discover" });
  const endpointsText = r.envValue("FARM_GRPC_ENDPOINTS");
  const endpoints = input?.endpoints ?? (endpointsText ? parseEndpoints(r, endpointsText) : undefined);
  // Where emulators write discovery files: explicit, else the emulator's own rule for this environment.
  const discoveryDir = input?.discoveryDir ?? r.envValue("FARM_GRPC_DISCOVERY_DIR") ?? discoveryDirectory(r.environment);
  // Frames through shared memory from emulators on this host; off when they cannot see this host's /dev/shm anyway.
  const sharedFrames = r.bool("grpc shared frames", { flag: input?.sharedFrames, env: "FARM_GRPC_SHARED_FRAMES", default: true });
  return { mode, ...(endpoints ? { endpoints } : {}), discoveryDir, sharedFrames, ...(input?.callTimeoutMs !== undefined ? { callTimeoutMs: input.callTimeoutMs } : {}) };
}

/** FARM_WORKER_URL: an http(s) base URL without credentials, query or fragment. */
function checkAdvertiseUrl(v: string | undefined): void {
  if (v === undefined) return;
  let u: URL | undefined;
  try {
    u = new URL(v);
  } catch {
    u = undefined;
  }
  if (!u || !/^https?:$/.test(u.protocol) || u.username || u.password || u.search || u.hash) {
    throw new Error(`'${v.slice(0, 100)}' must be an http(s) base URL like http://node-3:9465 (no credentials, query or fragment)`);
  }
}
