/**
 * The one place a Redis connection is made from a URL. Every farm process reads `REDIS_URL`
 * (`redis://[user[:password]@]host[:port][/db]`, or `rediss://…` for TLS) through here.
 *
 * We parse the URL ourselves into explicit ioredis options (instead of handing ioredis the string) so
 * that BullMQ, which creates its own connections from options, gets exactly the same settings, and so a
 * bad URL fails at start-up with a message that names the problem — without echoing the password.
 */
import { Redis } from "ioredis";
import { QueueError } from "./errors.ts";

export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

/**
 * Plain connection settings, assignable both to ioredis `RedisOptions` and BullMQ `ConnectionOptions`
 * (whose declared types differ, so neither library's own type is used here).
 */
export interface RedisConnectionOptions {
  host: string;
  port: number;
  db?: number;
  username?: string;
  password?: string;
  tls?: { servername: string };
  maxRetriesPerRequest?: number | null;
}

/** What the connection is for. Blocking users (BullMQ Worker, QueueEvents) need `maxRetriesPerRequest: null`. */
export type ConnectionRole = "command" | "blocking";

/** `user:password` (or a bare token) of a URL's user info, masked: `user:***` / `***`. */
function maskUserInfo(userInfo: string): string {
  const colon = userInfo.indexOf(":");
  return colon >= 0 ? `${userInfo.slice(0, Math.min(colon, 64))}:***` : "***";
}

/**
 * `url` with the password replaced by `***`, for logs and error messages. The user info runs to the
 * LAST `@` (a password may contain `@`, `/`, `%40`, `:`), so no part of it is ever printed.
 */
export function redactRedisUrl(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)/i.exec(url);
  if (!m) return url;
  const rest = url.slice(m[1]!.length);
  const at = rest.lastIndexOf("@");
  if (at < 0) return url;
  return `${m[1]}${maskUserInfo(rest.slice(0, at))}@${rest.slice(at + 1)}`;
}

/**
 * Any text with credentials masked: user info of every `scheme://user:pass@` URL (to the last `@` of
 * the URL), `Bearer <token>`, and `token=` / `password=` / `secret=` / `key=` query or form values.
 */
export function redactCredentials(text: string): string {
  return text
    // `"` ends the match so JSON stays JSON (raw `"` cannot appear in a URL's user info anyway).
    .replace(/([a-z][a-z0-9+.-]*:\/\/)([^\s"<>]*)@/gi, (_m, scheme: string, info: string) => `${scheme}${maskUserInfo(info)}@`)
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g, "$1 ***")
    .replace(/([?&;\s](?:access_token|token|password|passwd|secret|api_key|apikey|key)=)[^&\s"']+/gi, "$1***");
}

/** Parses a redis:// or rediss:// URL into ioredis options (host, port, username, password, db, tls). */
export function parseRedisUrl(url: string): RedisConnectionOptions {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new QueueError("REDIS_URL_INVALID", `invalid Redis URL '${redactRedisUrl(url)}': expected redis://[user:password@]host[:port][/db] or rediss://…`);
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:") {
    throw new QueueError("REDIS_URL_INVALID", `invalid Redis URL '${redactRedisUrl(url)}': scheme must be redis:// or rediss://, not ${u.protocol}//`);
  }
  // WHATWG URL keeps IPv6 brackets in hostname; sockets want them off.
  const host = u.hostname.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1";
  const port = u.port === "" ? 6379 : Number(u.port);
  const dbText = u.pathname.replace(/^\//, "");
  if (dbText !== "" && !/^\d{1,5}$/.test(dbText)) {
    throw new QueueError("REDIS_URL_INVALID", `invalid Redis URL '${redactRedisUrl(url)}': database must be a number (/0, /1, …), got '/${dbText}'`);
  }
  const opts: RedisConnectionOptions = { host, port };
  if (dbText !== "") opts.db = Number(dbText);
  // redis://:pass@host (no user) authenticates as the default user, as redis-cli does.
  if (u.username !== "") opts.username = decodeURIComponent(u.username);
  if (u.password !== "") opts.password = decodeURIComponent(u.password);
  if (u.protocol === "rediss:") opts.tls = { servername: host };
  return opts;
}

/**
 * Connection options for BullMQ (`connection:` of Queue, Worker, QueueEvents) and for `createRedisClient`.
 * `role: "blocking"` sets `maxRetriesPerRequest: null`, which BullMQ Workers and QueueEvents require.
 */
export function redisConnection(url: string = process.env.REDIS_URL ?? DEFAULT_REDIS_URL, role: ConnectionRole = "command"): RedisConnectionOptions {
  const opts = parseRedisUrl(url);
  if (role === "blocking") opts.maxRetriesPerRequest = null;
  return opts;
}

/** A new ioredis client for plain commands (campaign state). The caller owns it and must `quit()` it. */
export function createRedisClient(url: string = process.env.REDIS_URL ?? DEFAULT_REDIS_URL, role: ConnectionRole = "command"): Redis {
  return new Redis(redisConnection(url, role));
}
