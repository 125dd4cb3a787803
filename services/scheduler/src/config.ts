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
 */
import { z } from "zod";
import { DEFAULT_REDIS_URL, validateRedisUrl, resolveQueuePrefix } from "@farm/queue";

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
}

const configSchema = z.strictObject({
  redisUrl: z.string().refine((u) => {
    try {
      validateRedisUrl(u);
      return true;
    } catch {
      return false;
    }
  }, "must be redis://[user:password@]host[:port][/db] or rediss://…"),
  prefix: z.string(),
  host: z.string().min(1),
  port: z.coerce.number().int().min(0).max(65_535).refine((p) => p !== 5037 && p !== 6379 && !(p >= 5554 && p <= 5585), "ports 5037, 6379 and 5554-5585 belong to adb, Redis and emulators"),
  token: z.string().min(16, "use at least 16 characters").max(4096).regex(/^[!-~]+$/, "printable ASCII without spaces").optional(),
  allowedHosts: z.array(z.string().regex(/^[A-Za-z0-9._:-]{1,253}$/, "host names only (letters, digits, '.', '-', ':')")),
  protectMetrics: z.boolean(),
  taskPaths: z.array(z.string().min(1)).min(1),
  windowSize: z.coerce.number().int().min(1).max(1_000_000),
  tickMs: z.coerce.number().int().min(50).max(600_000),
  reconcileMs: z.coerce.number().int().min(100).max(3_600_000),
});

export type SchedulerConfig = z.infer<typeof configSchema>;

function list(v: string[] | string | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  return (Array.isArray(v) ? v : v.split(",")).map((s) => s.trim()).filter(Boolean);
}

export function loadSchedulerConfig(flags: SchedulerFlags = {}, env: NodeJS.ProcessEnv = process.env): SchedulerConfig {
  const r = configSchema.safeParse({
    redisUrl: flags.redisUrl ?? env.REDIS_URL ?? DEFAULT_REDIS_URL,
    prefix: resolveQueuePrefix(flags.prefix, env),
    host: flags.host ?? env.FARM_SCHEDULER_HOST ?? "127.0.0.1",
    port: flags.port ?? env.FARM_SCHEDULER_PORT ?? DEFAULT_SCHEDULER_PORT,
    token: flags.token ?? (env.FARM_API_TOKEN || undefined),
    allowedHosts: list(flags.allowedHosts) ?? list(env.FARM_API_ALLOWED_HOSTS) ?? [],
    protectMetrics: flags.protectMetrics ?? /^(1|true|yes)$/i.test(env.FARM_API_PROTECT_METRICS ?? ""),
    taskPaths: list(flags.tasks) ?? list(env.FARM_TASKS) ?? ["tasks"],
    windowSize: flags.windowSize ?? env.FARM_WINDOW_SIZE ?? 1000,
    tickMs: flags.tickMs ?? 2000,
    reconcileMs: flags.reconcileMs ?? 15_000,
  });
  if (!r.success) {
    throw new Error(`invalid scheduler configuration: ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
  return r.data;
}
