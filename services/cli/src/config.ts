/**
 * The `farm` command's settings from the environment, read once here and nowhere else in the CLI; a
 * command's flags win over them. The services' own settings (worker, scheduler) are compiled by their
 * config modules, which the `farm worker` / `farm scheduler` commands call with the flags.
 *
 *   REDIS_URL        Redis for commands that talk to it directly (default redis://127.0.0.1:6379)
 *   FARM_QUEUE_PREFIX  BullMQ prefix (default {farm})
 *   FARM_API_URL     the scheduler's HTTP API: commands use it instead of Redis when set
 *   FARM_API_TOKEN   its bearer token
 *   FARM_LOG_LEVEL   log level of commands that log (run, demo, export; default: info, demo warn)
 *   FARM_POLICY_ALLOWED_HOSTS  hosts `farm run --policy http:…` (and `llm`) may reach besides loopback
 *   FARM_LLM_API_KEY  bearer token of `farm run --policy llm`'s model server (never logged)
 *   FARM_LLM_KEY_HOSTS  the only hosts that key goes to (exact names/addresses; https unless loopback; default loopback);
 *                    also checked by `farm submit` against Redis when set (the workers' value)
 *   FARM_TRAJECTORY_READ_BUDGET_MB  memory budget per trajectory file read by `farm trajectories …` (MiB, default 256)
 *   ADB_BIN          the adb executable (`farm run`; default adb)
 *   FARM_TREES, FARM_FORWARDER_APK, FARM_FORWARDER_CONNECT_MS  `farm run`'s screen trees, as the worker's (runTreesConfig)
 *   FARM_DEBUG       1: print the stack of a fatal error
 */
import { SettingsReader, type Environment } from "@farm/config";
import { LOG_LEVELS, type LogLevel } from "@farm/log/levels";
import { treesConfig, type DeviceTreesConfig, type TreesConfigInput } from "@farm/worker/trees-config";
import { hostAllowList, LLM_API_KEY_ENV, LLM_KEY_HOSTS_ENV, llmApiKeyProblem, parseKeyHosts } from "@farm/policy/settings";

export interface CliConfig {
  redisUrl: string | undefined;
  queuePrefix: string | undefined;
  apiUrl: string | undefined;
  apiToken: string | undefined;
  /** Undefined: each command's own default. */
  logLevel: LogLevel | undefined;
  policyAllowedHosts: string[];
  llmApiKey: string | undefined;
  /** FARM_LLM_KEY_HOSTS as set (undefined: not set; `farm run` then uses the policy's loopback default). */
  llmKeyHosts: readonly string[] | undefined;
  adbBin: string;
  /** For the trajectory readers: `{}` = their default. */
  trajectoryRead: { memoryBudgetBytes?: number };
  debug: boolean;
}

let cached: CliConfig | undefined;

function readBudget(r: SettingsReader): { memoryBudgetBytes?: number } {
  const mb = r.int("trajectoryReadBudgetMb", { env: "FARM_TRAJECTORY_READ_BUDGET_MB", default: 0, min: 1, max: 65_536 });
  return mb === 0 ? {} : { memoryBudgetBytes: mb * 1024 * 1024 };
}

export function loadCliConfig(env: Environment = process.env): CliConfig {
  const r = new SettingsReader("farm", env);
  const logLevel = r.envValue("FARM_LOG_LEVEL") === undefined ? undefined : r.oneOf("logLevel", LOG_LEVELS, { env: "FARM_LOG_LEVEL", default: "info" });
  return {
    redisUrl: r.string("redisUrl", { env: "REDIS_URL", default: undefined }),
    queuePrefix: r.string("queuePrefix", { env: "FARM_QUEUE_PREFIX", default: undefined }),
    apiUrl: r.string("apiUrl", { env: "FARM_API_URL", default: undefined }),
    apiToken: r.string("apiToken", { env: "FARM_API_TOKEN", default: undefined }),
    logLevel,
    policyAllowedHosts: r.check("policyAllowedHosts", "FARM_POLICY_ALLOWED_HOSTS", r.list("policyAllowedHosts", { env: "FARM_POLICY_ALLOWED_HOSTS", default: [] }), hostAllowList),
    llmApiKey: r.check("llmApiKey", LLM_API_KEY_ENV, r.string("llmApiKey", { env: LLM_API_KEY_ENV, default: undefined }), (k) => {
      const problem = k === undefined ? undefined : llmApiKeyProblem(k);
      if (problem) throw new Error(problem);
    }),
    llmKeyHosts: r.check("llmKeyHosts", LLM_KEY_HOSTS_ENV, r.list("llmKeyHosts", { env: LLM_KEY_HOSTS_ENV, default: undefined }), (v) => v && parseKeyHosts(v)),
    trajectoryRead: readBudget(r),
    adbBin: r.string("adbBin", { env: "ADB_BIN", default: "adb" }),
    debug: r.bool("debug", { env: "FARM_DEBUG", default: false }),
  };
}

/** The process's CLI config, compiled on first use (a bad FARM_LOG_LEVEL fails the command that needs it). */
export function cliConfig(): CliConfig {
  cached ??= loadCliConfig();
  return cached;
}

/**
 * `farm run`'s screen-tree settings (--trees, FARM_TREES, FARM_FORWARDER_APK, FARM_FORWARDER_CONNECT_MS), checked as
 * the worker checks its own; compiled when `farm run` starts, so a bad value fails only the command that uses it.
 */
export function runTreesConfig(input: TreesConfigInput, env: Environment = process.env): DeviceTreesConfig {
  return treesConfig(new SettingsReader("run", env), input);
}
