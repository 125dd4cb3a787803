import type { Command } from "commander";
import { collect, parseIntOption } from "./options.ts";
import type { CommandModule } from "./types.ts";
import type { TreeSourceSetting } from "@farm/worker/trees-config";

interface WorkerOptions {
  advertiseUrl?: string;
  heartbeatMs?: string;
  redis?: string;
  prefix?: string;
  adbHost?: string;
  adbPort?: string;
  devices?: string;
  tasks: string[];
  apkDir: string[];
  policyDir?: string;
  out?: string;
  metricsPort?: string;
  metricsHost?: string;
  name?: string;
  lockMs?: string;
  stalledMs?: string;
  drainMs?: string;
  resolveMs?: string;
  settleMs?: string;
  stepTimeoutMs?: string;
  policyTimeoutMs?: string;
  grpc?: string;
  grpcDiscoveryDir?: string;
  envPort?: string;
  envHost?: string;
  envToken?: string;
  envIdleMs?: string;
  openenvPort?: string;
  openenvHost?: string;
  openenvToken?: string;
  openenvIdleMs?: string;
  openenvMaxSessions?: string;
  openenvTask?: string;
  launch?: string;
  avd?: string;
  emulator?: string;
  snapshot?: string;
  bootTimeoutMs?: string;
  trees?: string;
  forwarderApk?: string;
}

/**
 * `farm worker`: binds a BullMQ worker to each device on an adb server and runs episode jobs until
 * SIGTERM/SIGINT (then drains and exits 0). Flags override the environment (REDIS_URL, FARM_*).
 * stdout: one JSON line `{"event":"worker:ready",…}` once started; logs go to stderr.
 */
export const workerCommand: CommandModule = {
  register(program: Command) {
    program
      .command("worker")
      .description("run episode jobs on the devices of an adb server (until SIGTERM)")
      .option("--redis <url>", "Redis URL (default: REDIS_URL or redis://127.0.0.1:6379)")
      .option("--prefix <prefix>", "queue prefix (default: FARM_QUEUE_PREFIX or {farm})")
      .option("--adb-host <host>", "adb server host (default 127.0.0.1)")
      .option("--adb-port <port>", "adb server port (default 5037)")
      .option("--devices <serials>", "comma-separated serials to bind (default: every device)")
      .option("--tasks <path>", "task file or folder (repeatable; default: tasks)", collect, [] as string[])
      .option("--apk-dir <folder>", "extra APK folder (repeatable)", collect, [] as string[])
      .option("--policy-dir <folder>", "folder for scripted:<name> / module:<name> policies")
      .option("--out <folder>", "trajectory folder (default: out/trajectories)")
      .option("--metrics-port <port>", "/metrics port, 0 = a free one (default 9465)")
      .option("--metrics-host <host>", "/metrics bind address (default 127.0.0.1)")
      .option("--name <name>", "worker name in results and trajectories (default <host>-<pid>)")
      .option("--advertise-url <url>", "how the scheduler reaches this worker's HTTP server for device screens (default: FARM_WORKER_URL, else the metrics bind)")
      .option("--heartbeat-ms <ms>", "device heartbeat interval; the TTL is 5 intervals (default: FARM_HEARTBEAT_MS or 2000)")
      .option("--lock-ms <ms>", "BullMQ job lock duration (default 30000)")
      .option("--stalled-ms <ms>", "stalled-job check interval (default 30000)")
      .option("--resolve-ms <ms>", "how often files left pending by a crash or a lost lock are settled against the claims (default 30000)")
      .option("--drain-ms <ms>", "on SIGTERM, how long a running episode may finish before it is handed back (default 60000)")
      .option("--settle-ms <ms>", "wait after each setup/reset step (default 500)")
      .option("--step-timeout-ms <ms>", "per-step deadline (default 10000; a job's option overrides)")
      .option("--policy-timeout-ms <ms>", "policy deadline, one act() (FARM_POLICY_TIMEOUT_MS; default 0: what each policy needs, else 30000; a job's option overrides)")
      .option("--grpc <mode>", "emulator gRPC for actions and frames: discover (default: where a discovery file offers it), config (FARM_GRPC_ENDPOINTS only) or off")
      .option("--grpc-discovery-dir <folder>", "where emulators write pid_<pid>.ini (default: the emulator's running-AVD folder)")
      .option("--env-port <port>", "serve remote environments (dm_env_rpc v1) on this port, 0 = a free one (default: FARM_ENV_PORT, else off)")
      .option("--env-host <host>", "remote-env bind address (default 127.0.0.1; beyond loopback a token is required)")
      .option("--env-token <token>", "token remote-env clients send as 'authorization: Bearer <token>' (default: FARM_ENV_TOKEN)")
      .option("--env-idle-ms <ms>", "a world whose client is gone gives its device back after this long (default 60000)")
      .option("--openenv-port <port>", "serve devices as OpenEnv environments (HTTP + WebSocket /ws) on this port, 0 = a free one (default: FARM_OPENENV_PORT, else off)")
      .option("--openenv-host <host>", "OpenEnv bind address (default 127.0.0.1; beyond loopback a token is required)")
      .option("--openenv-token <token>", "token OpenEnv clients send as 'Authorization: Bearer <token>' (default: FARM_OPENENV_TOKEN)")
      .option("--openenv-idle-ms <ms>", "an OpenEnv session with no message for this long ends and gives its device back (default 300000)")
      .option("--openenv-max-sessions <n>", "most OpenEnv sessions at once, each holding a device (default 64)")
      .option("--openenv-task <id>", "the task or family a reset without 'task' runs (default: FARM_OPENENV_TASK, else 'task' is required)")
      .option("--trees <source>", "where screen trees come from: uiautomator (default: `uiautomator dump`), forwarder (AndroidEnv's accessibility forwarder on every device, installed from --forwarder-apk where missing; a device without one falls back to uiautomator, logged once) or auto (the forwarder where the device has it) (FARM_TREES)")
      .option("--forwarder-apk <file>", "the forwarder APK --trees forwarder installs where the package is missing (FARM_FORWARDER_APK; default tasks/apks/accessibility_forwarder.apk)")
      .option("--launch <n>", "launch N emulators of --avd and run on them (relaunched when they exit, hang or fail to boot; shut down on drain)")
      .option("--avd <name>", "the AVD launched emulators run (read-only, shared by all)")
      .option("--emulator <path>", "emulator executable (default: $ANDROID_SDK_ROOT/emulator/emulator, else emulator on PATH)")
      .option("--snapshot <name>", "boot launched emulators from this snapshot")
      .option("--boot-timeout-ms <ms>", "a launched emulator not booted after this long is relaunched (default 120000)")
      .action(async (o: WorkerOptions) => {
        const lockDurationMs = parseIntOption("lock-ms", o.lockMs);
        const stalledIntervalMs = parseIntOption("stalled-ms", o.stalledMs);
        const drainTimeoutMs = parseIntOption("drain-ms", o.drainMs);
        const resolveIntervalMs = parseIntOption("resolve-ms", o.resolveMs);
        const adbPort = parseIntOption("adb-port", o.adbPort);
        const metricsPort = parseIntOption("metrics-port", o.metricsPort);
        const settleMs = parseIntOption("settle-ms", o.settleMs);
        const stepTimeoutMs = parseIntOption("step-timeout-ms", o.stepTimeoutMs);
        const policyTimeoutMs = parseIntOption("policy-timeout-ms", o.policyTimeoutMs);
        const envPort = parseIntOption("env-port", o.envPort);
        const envIdleTimeoutMs = parseIntOption("env-idle-ms", o.envIdleMs);
        const openenvPort = parseIntOption("openenv-port", o.openenvPort);
        const openenvIdleTimeoutMs = parseIntOption("openenv-idle-ms", o.openenvIdleMs);
        const openenvMaxSessions = parseIntOption("openenv-max-sessions", o.openenvMaxSessions);
        const launchCount = parseIntOption("launch", o.launch);
        const bootTimeoutMs = parseIntOption("boot-timeout-ms", o.bootTimeoutMs);
        const heartbeatMs = parseIntOption("heartbeat-ms", o.heartbeatMs);
        // The flags above are checked before the worker loads (a bad command line fails at once).
        const { runWorkerMain } = await import("@farm/worker");
        await runWorkerMain({
          ...(envPort !== undefined ? { envPort } : {}),
          ...(o.envHost ? { envHost: o.envHost } : {}),
          ...(o.envToken ? { envToken: o.envToken } : {}),
          ...(envIdleTimeoutMs !== undefined ? { envIdleTimeoutMs } : {}),
          ...(openenvPort !== undefined ? { openenvPort } : {}),
          ...(o.openenvHost ? { openenvHost: o.openenvHost } : {}),
          ...(o.openenvToken ? { openenvToken: o.openenvToken } : {}),
          ...(openenvIdleTimeoutMs !== undefined ? { openenvIdleTimeoutMs } : {}),
          ...(openenvMaxSessions !== undefined ? { openenvMaxSessions } : {}),
          ...(o.openenvTask ? { openenvTask: o.openenvTask } : {}),
          ...(o.trees !== undefined ? { trees: o.trees as TreeSourceSetting } : {}),
          ...(o.forwarderApk ? { forwarderApk: o.forwarderApk } : {}),
          ...(o.redis ? { redisUrl: o.redis } : {}),
          ...(o.prefix ? { queuePrefix: o.prefix } : {}),
          ...(o.adbHost ? { adbHost: o.adbHost } : {}),
          ...(adbPort !== undefined ? { adbPort } : {}),
          ...(o.devices ? { devices: o.devices.split(",").map((s) => s.trim()).filter(Boolean) } : {}),
          ...(o.tasks.length ? { taskPaths: o.tasks } : {}),
          ...(o.apkDir.length ? { apkDirs: o.apkDir } : {}),
          ...(o.policyDir ? { policyDir: o.policyDir } : {}),
          ...(o.out ? { outDir: o.out } : {}),
          ...(metricsPort !== undefined ? { metricsPort } : {}),
          ...(o.metricsHost ? { metricsHost: o.metricsHost } : {}),
          ...(o.name ? { workerName: o.name } : {}),
          ...(o.advertiseUrl ? { advertiseUrl: o.advertiseUrl } : {}),
          ...(heartbeatMs !== undefined ? { heartbeatMs } : {}),
          ...(lockDurationMs !== undefined ? { lockDurationMs } : {}),
          ...(stalledIntervalMs !== undefined ? { stalledIntervalMs } : {}),
          ...(drainTimeoutMs !== undefined ? { drainTimeoutMs } : {}),
          ...(resolveIntervalMs !== undefined ? { resolveIntervalMs } : {}),
          ...(o.grpc || o.grpcDiscoveryDir
            ? { grpc: { ...(o.grpc ? { mode: o.grpc as "off" | "config" | "discover" } : {}), ...(o.grpcDiscoveryDir ? { discoveryDir: o.grpcDiscoveryDir } : {}) } }
            : {}),
          ...(launchCount !== undefined || o.avd || o.emulator || o.snapshot || bootTimeoutMs !== undefined
            ? {
                launch: {
                  ...(launchCount !== undefined ? { count: launchCount } : {}),
                  ...(o.avd ? { avd: o.avd } : {}),
                  ...(o.emulator ? { emulator: o.emulator } : {}),
                  ...(o.snapshot ? { snapshot: o.snapshot } : {}),
                  ...(bootTimeoutMs !== undefined ? { bootTimeoutMs } : {}),
                },
              }
            : {}),
          episode: {
            ...(settleMs !== undefined ? { settleMs } : {}),
            ...(stepTimeoutMs !== undefined ? { stepTimeoutMs } : {}),
            ...(policyTimeoutMs !== undefined ? { policyTimeoutMs } : {}),
          },
        });
      });
  },
};
