/**
 * The scheduler's complete configuration, built once at start-up from flags over environment over
 * defaults, and validated. Nothing else reads process.env.
 *
 *   REDIS_URL              redis://[user:pass@]host:port[/db] or rediss://…   (default redis://127.0.0.1:6379)
 *   FARM_QUEUE_PREFIX      BullMQ prefix with a hash tag                    (default {farm})
 *   FARM_SCHEDULER_HOST    HTTP bind address                                (default 127.0.0.1)
 *   FARM_SCHEDULER_PORT    HTTP port                                        (default 8420)
 *   FARM_API_TOKEN         bearer token (required to bind a non-loopback address; then every route needs it)
 *   FARM_API_ALLOWED_HOSTS Host names clients may use besides loopback names and the bind address (comma-separated)
 *   FARM_API_PROTECT_METRICS  1/true: /metrics needs the token too on a non-loopback bind (default: open for scrapers)
 *   FARM_TASKS             task files/folders, comma-separated              (default tasks)
 *   FARM_WINDOW_SIZE       most in-flight episodes per campaign             (default 1000)
 *   FARM_LLM_KEY_HOSTS     the workers' key hosts: an llm campaign naming another endpoint fails at submit (default: no check)
 *   FARM_LOG_LEVEL         trace, debug, info, warn, error, fatal or silent (default info)
 *   FARM_TRAJECTORIES      trajectory folders the workers write, comma-separated: the episode viewer and reports read them (default none)
 *   FARM_OPERATOR_TOKENS   name:token,… — the operator role: drives `human` episodes at /operate, nothing more (needs FARM_API_TOKEN)
 */
import { SettingsReader, type Environment } from "@farm/config";
import { LOG_LEVELS, type LogLevel } from "@farm/log";
import { isReservedPort } from "@farm/net-ports";
import { LLM_KEY_HOSTS_ENV, parseKeyHosts } from "@farm/policy/settings";
import { DEFAULT_QUEUE_PREFIX, DEFAULT_REDIS_URL, OPERATOR_NAME_PATTERN, validateRedisUrl, resolveQueuePrefix } from "@farm/queue";
import { coerceError } from "@farm/errors";

export const DEFAULT_SCHEDULER_PORT = 8420;

export interface SchedulerFlags {
  redisUrl?: string;
  prefix?: string;
  host?: string;
  port?: number | string;
  token?: string;
  allowedHosts?: string[] | string;
  protectMetrics?: boolean;
  tasks?: string[] | string;
  windowSize?: number | string;
  tickMs?: number | string;
  reconcileMs?: number | string;
  logLevel?: string;
  trajectories?: string[] | string;
  seriesSampleMs?: number | string;
  /** `name:token,…` (FARM_OPERATOR_TOKENS): operators who may drive `human` episodes at /operate and nothing more. */
  operatorTokens?: string;
}

export interface SchedulerConfig {
  redisUrl: string;
  prefix: string;
  host: string;
  port: number;
  token: string | undefined;
  allowedHosts: string[];
  protectMetrics: boolean;
  taskPaths: string[];
  windowSize: number;
  tickMs: number;
  reconcileMs: number;
  /** Undefined: llm endpoints are checked by the workers alone. */
  llmKeyHosts: readonly string[] | undefined;
  logLevel: LogLevel;
  /** Trajectory folders for the viewer and reports (may be empty). */
  trajectories: string[];
  /** How often the fleet page's charts sample Redis. */
  seriesSampleMs: number;
  /** The operator role's tokens (FARM_OPERATOR_TOKENS; needs FARM_API_TOKEN). */
  operators: { name: string; token: string }[];
}

/** Ports other services of a farm host own: binding one of them is a mistake worth stopping at. */
function checkPort(p: number): void {
  if (isReservedPort(p)) throw new Error("is taken by adb, Redis or emulators (5037, 6379, 5554-5585): choose another port");
}

function checkToken(t: string | undefined): void {
  if (t === undefined) return;
  if (t.length < 16 || t.length > 4096) throw new Error("must be 16-4096 characters (use at least 16)");
  if (!/^[!-~]+$/.test(t)) throw new Error("must be printable ASCII without spaces");
}

function checkHostNames(hosts: string[]): void {
  const bad = hosts.find((h) => !/^[A-Za-z0-9._:-]{1,253}$/.test(h));
  if (bad !== undefined) throw new Error(`takes host names only (letters, digits, '.', '-', ':'), got '${bad.slice(0, 80)}'`);
}

/** Flags over environment over defaults, validated; throws ConfigError naming the setting and its variable. */
export function loadSchedulerConfig(flags: SchedulerFlags = {}, env: Environment = process.env): SchedulerConfig {
  const r = new SettingsReader("scheduler", env);
  const redisUrl = r.string("redisUrl", { flag: flags.redisUrl, env: "REDIS_URL", default: DEFAULT_REDIS_URL });
  const taskPaths = r.list("tasks", { flag: flags.tasks, env: "FARM_TASKS", default: ["tasks"] });
  if (taskPaths.length === 0) r.fail("tasks (FARM_TASKS)", "needs at least one task file or folder");
  return {
    redisUrl: r.check("redisUrl", "REDIS_URL", redisUrl, validateRedisUrl),
    prefix: r.check("prefix", "FARM_QUEUE_PREFIX", r.string("prefix", { flag: flags.prefix, env: "FARM_QUEUE_PREFIX", default: DEFAULT_QUEUE_PREFIX }), resolveQueuePrefix),
    host: r.string("host", { flag: flags.host, env: "FARM_SCHEDULER_HOST", default: "127.0.0.1" }),
    port: r.check("port", "FARM_SCHEDULER_PORT", r.int("port", { flag: flags.port, env: "FARM_SCHEDULER_PORT", default: DEFAULT_SCHEDULER_PORT, min: 0, max: 65_535 }), checkPort),
    token: r.check("token", "FARM_API_TOKEN", r.string("token", { flag: flags.token || undefined, env: "FARM_API_TOKEN", default: undefined }), checkToken),
    allowedHosts: r.check("allowedHosts", "FARM_API_ALLOWED_HOSTS", r.list("allowedHosts", { flag: flags.allowedHosts, env: "FARM_API_ALLOWED_HOSTS", default: [] }), checkHostNames),
    protectMetrics: r.bool("protectMetrics", { flag: flags.protectMetrics, env: "FARM_API_PROTECT_METRICS", default: false }),
    taskPaths,
    windowSize: r.int("windowSize", { flag: flags.windowSize, env: "FARM_WINDOW_SIZE", default: 1000, min: 1, max: 1_000_000 }),
    tickMs: r.int("tickMs", { flag: flags.tickMs, default: 2000, min: 50, max: 600_000 }),
    reconcileMs: r.int("reconcileMs", { flag: flags.reconcileMs, default: 15_000, min: 100, max: 3_600_000 }),
    llmKeyHosts: r.check("llmKeyHosts", LLM_KEY_HOSTS_ENV, r.list("llmKeyHosts", { env: LLM_KEY_HOSTS_ENV, default: undefined }), (v) => v && parseKeyHosts(v)),
    logLevel: r.oneOf("logLevel", LOG_LEVELS, { flag: flags.logLevel, env: "FARM_LOG_LEVEL", default: "info" }),
    trajectories: r.list("trajectories", { flag: flags.trajectories, env: "FARM_TRAJECTORIES", default: [] }),
    seriesSampleMs: r.int("seriesSampleMs", { flag: flags.seriesSampleMs, default: 10_000, min: 100, max: 600_000 }),
    operators: parseOperatorTokens(
      r.check("operatorTokens", "FARM_OPERATOR_TOKENS", r.string("operatorTokens", { flag: flags.operatorTokens, env: "FARM_OPERATOR_TOKENS", default: undefined }), (v) => {
        if (parseOperatorTokens(v).length && !(flags.token || env.FARM_API_TOKEN)) throw new Error("needs FARM_API_TOKEN too (the operator role exists only beside the admin token)");
      }),
    ),
  };
}

/** `alice:token1,bob:token2` → operators; names as OPERATOR_NAME_PATTERN, tokens as FARM_API_TOKEN's. Throws naming the entry. */
export function parseOperatorTokens(v: string | undefined): { name: string; token: string }[] {
  if (!v) return [];
  const out: { name: string; token: string }[] = [];
  for (const [i, part] of v.split(",").entries()) {
    const colon = part.indexOf(":");
    const name = part.slice(0, colon).trim();
    const token = part.slice(colon + 1).trim();
    if (colon < 0 || !OPERATOR_NAME_PATTERN.test(name)) throw new Error(`entry ${i + 1}: write name:token (a name of 1-64 letters, digits, '.', '_', '-')`);
    try {
      checkToken(token);
    } catch (e) {
      throw new Error(`entry ${i + 1} (${name}): the token ${coerceError(e).message}`);
    }
    if (out.some((o) => o.name === name)) throw new Error(`entry ${i + 1}: operator ${name} is named twice`);
    out.push({ name, token });
  }
  return out;
}
