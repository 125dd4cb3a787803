/**
 * How a farm process lives with Redis going away: one log line when it goes, one when it is back (with
 * the outage length) instead of one per reconnect attempt; `up` for callers that must answer fast
 * (the scheduler's API answers 503 at once while Redis is down); and a start-up check that turns
 * credentials or ACL refusals into one clear, fatal error instead of retrying forever.
 */
import type { EventEmitter } from "node:events";
import type { RedisClient as Redis } from "./connection.ts";
import type { Logger } from "@farm/log";
import { redactRedisUrl } from "./credentials.ts";
import { QueueError } from "./errors.ts";
import { withDeadline } from "@farm/time";
import { coerceError } from "@farm/errors";

const CONNECTION_ERROR = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|Connection is closed|Stream isn't writeable|connect ETIMEDOUT|MaxRetriesPerRequest|Socket closed unexpectedly|Socket timeout|Command timed out|LOADING/;

/** A socket-level error (Redis down or unreachable), as opposed to a command's error. */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | undefined;
  return CONNECTION_ERROR.test(`${e?.code ?? ""} ${e?.message ?? ""}`);
}

const AUTH_ERROR = /WRONGPASS|NOAUTH|invalid password|invalid username-password|AUTH failed/i;
const ACL_ERROR = /NOPERM/;

/** A refusal no reconnect can fix (bad credentials, ACL): the process must stop and say so. */
export function isAccessError(err: unknown): boolean {
  const m = err == null ? "" : coerceError(err).message;
  return AUTH_ERROR.test(m) || ACL_ERROR.test(m);
}

export interface RedisHealthEvents {
  /** Told on every change (true = reachable again, with how long it was not). */
  onChange?(up: boolean, outageMs?: number): void;
}

/**
 * Watches one process's Redis connections. The state follows the watched "primary" client (its socket
 * closes at once when Redis dies, even when idle); errors from the others (BullMQ workers, queue events)
 * go to `noteError`, which keeps connection errors quiet while the outage is already logged.
 */
export class RedisHealth {
  private downSince: number | undefined;
  private lastError = "";
  private readonly warned = new Set<string>();
  private closed = false;

  constructor(
    private readonly log: Logger,
    private readonly events: RedisHealthEvents = {},
    private readonly now: () => number = Date.now,
  ) {}

  get up(): boolean {
    return this.downSince === undefined;
  }

  /** Length of the current outage in ms (0 when up). */
  get outageMs(): number {
    return this.downSince === undefined ? 0 : this.now() - this.downSince;
  }

  get lastErrorMessage(): string {
    return this.lastError;
  }

  /** Follows `client`'s connection: down on error/close, up on ready. */
  watch(client: EventEmitter): this {
    client.on("error", (e: Error) => {
      this.lastError = e.message;
      if (isConnectionError(e)) this.markDown(e.message);
      else this.noteError(e);
    });
    client.on("close", () => this.markDown(this.lastError || "connection closed"));
    client.on("ready", () => this.markUp());
    return this;
  }

  /** The process closes its connections on purpose: that is not an outage. */
  close(): void {
    this.closed = true;
  }

  markDown(reason: string): void {
    if (this.downSince !== undefined || this.closed) return;
    this.downSince = this.now();
    this.log.warn({ event: "redis:down", reason }, "Redis unreachable; retrying in the background (logged again when it is back)");
    this.events.onChange?.(false);
  }

  markUp(): void {
    if (this.downSince === undefined) return;
    const outageMs = this.now() - this.downSince;
    this.downSince = undefined;
    this.log.info({ event: "redis:up", outageMs }, `Redis reachable again after ${(outageMs / 1000).toFixed(1)} s`);
    this.events.onChange?.(true, outageMs);
  }

  /** An error from some other Redis user: connection errors are the outage (already logged); others once per message. */
  noteError(err: Error): void {
    if (isConnectionError(err) || this.closed) return;
    const key = err.message.slice(0, 200);
    if (this.warned.has(key)) return;
    if (this.warned.size < 100) this.warned.add(key);
    this.log.warn({ event: "redis:error", err: err.message }, "Redis error");
  }
}

/**
 * Start-up check: Redis answers and lets this user run what the farm runs (PING, EVAL on a key under the
 * prefix). Throws QueueError REDIS_ACCESS_DENIED for bad credentials or ACLs (fatal: fix the URL or the
 * ACL), REDIS_UNAVAILABLE when nothing answers within `timeoutMs`.
 */
export async function checkRedisAccess(client: Redis, url: string, prefix: string, timeoutMs = 5000): Promise<void> {
  const where = redactRedisUrl(url);
  let lastError: Error | undefined;
  const onError = (e: Error) => (lastError = e);
  client.on("error", onError);
  try {
    const check = async (): Promise<void> => {
      await client.ping();
      await client.eval("return redis.call('EXISTS', KEYS[1])", 1, `${prefix}:access-check`);
    };
    await withDeadline(check(), timeoutMs, () => lastError ?? new Error(`no answer within ${timeoutMs} ms`));
  } catch (e) {
    const err = isAccessError(lastError) ? lastError! : coerceError(e);
    if (isAccessError(err)) {
      const what = ACL_ERROR.test(err.message) ? "refused a command for this user (ACL)" : "refused the credentials";
      throw new QueueError("REDIS_ACCESS_DENIED", `Redis at ${where} ${what}: ${err.message}; fix the user/password in REDIS_URL (or --redis) or the user's ACL (it needs PING, EVAL and the keys under '${prefix}')`);
    }
    throw new QueueError("REDIS_UNAVAILABLE", `cannot reach Redis at ${where}: ${err.message} (set REDIS_URL or --redis)`, true);
  } finally {
    client.off("error", onError);
  }
}
