/**
 * The one place a Redis connection is made from a URL. Every farm process reads `REDIS_URL`
 * (`redis://[user[:password]@]host[:port][/db]`, or `rediss://…` for TLS) through here.
 *
 * A Redis Cluster is named by `redis+cluster://[user[:password]@]host1:port1,host2:port2,…` (or
 * `rediss+cluster://…` for TLS): one or more seed nodes; the client learns the rest of the cluster from
 * them and follows slot moves and failovers by itself. No `/db` (a cluster has database 0 only).
 *
 * We parse the URL ourselves into explicit ioredis options (instead of handing ioredis the string) so
 * that BullMQ, which creates its own connections from options, gets exactly the same settings, and so a
 * bad URL fails at start-up with a message that names the problem — without echoing the password.
 */
import { Cluster, Redis } from "ioredis";
import { QueueError } from "./errors.ts";
import { redactRedisUrl } from "./credentials.ts";

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
  socketTimeout?: number;
  connectTimeout?: number;
  keepAlive?: number;
}

/** What the connection is for. Blocking users (BullMQ Worker, QueueEvents) need `maxRetriesPerRequest: null`. */
export type ConnectionRole = "command" | "blocking";

/**
 * How long a connection waits for an answer before it counts the link as dead, for links between hosts
 * that can go silent (no reset reaches either side: a partition, a dropped NAT entry). Without it a
 * command waits until TCP gives up, about 15 minutes with Linux's defaults. A blocking connection waits
 * up to 10 s for a job by design (BullMQ's ceiling for BZPOPMIN), so it gets that much more. Set per URL
 * with `?socket_timeout_ms=N&connect_timeout_ms=N` (deploy/README.md: which values for which links).
 */
export const LINK_TIMEOUTS = { socketTimeoutMs: 10_000, blockingExtraMs: 10_000, connectTimeoutMs: 5_000, keepAliveMs: 5_000 } as const;

interface LinkOptions {
  socketTimeout: number;
  connectTimeout: number;
  keepAlive: number;
}

/** What a blocking connection needs beside its URL's options: BullMQ's `maxRetriesPerRequest: null`, and the wait its blocked fetch takes by design. */
function blockingOptions(socketTimeout: number): { maxRetriesPerRequest: null; socketTimeout: number } {
  return { maxRetriesPerRequest: null, socketTimeout: socketTimeout + LINK_TIMEOUTS.blockingExtraMs };
}

/** `?socket_timeout_ms=&connect_timeout_ms=` of a Redis URL (both optional); anything else is refused. */
function linkOptionsOf(url: string, search: string): LinkOptions {
  const params = new URLSearchParams(search);
  const ms = (name: string, dflt: number): number => {
    const v = params.get(name);
    if (v === null) return dflt;
    if (!/^\d{1,7}$/.test(v) || Number(v) < 100) throw new QueueError("REDIS_URL_INVALID", `invalid Redis URL '${redactRedisUrl(url)}': ${name} must be a whole number of milliseconds, at least 100, got '${v.slice(0, 20)}'`);
    return Number(v);
  };
  for (const key of params.keys()) {
    if (key !== "socket_timeout_ms" && key !== "connect_timeout_ms") throw new QueueError("REDIS_URL_INVALID", `invalid Redis URL '${redactRedisUrl(url)}': unknown parameter '${key.slice(0, 40)}' (known: socket_timeout_ms, connect_timeout_ms)`);
  }
  return {
    socketTimeout: ms("socket_timeout_ms", LINK_TIMEOUTS.socketTimeoutMs),
    connectTimeout: ms("connect_timeout_ms", LINK_TIMEOUTS.connectTimeoutMs),
    keepAlive: LINK_TIMEOUTS.keepAliveMs,
  };
}

/** A Redis Cluster's seed nodes and the options every node connection uses. */
export interface RedisClusterSpec {
  nodes: { host: string; port: number }[];
  redisOptions: Omit<RedisConnectionOptions, "host" | "port" | "db">;
}

/** True for `redis+cluster://…` and `rediss+cluster://…`. */
export function isClusterUrl(url: string): boolean {
  return /^rediss?\+cluster:\/\//i.test(url);
}

/** At most this many seed nodes in one URL (a cluster is found from any one of them). */
const MAX_SEED_NODES = 64;

/** Parses `redis+cluster://[user:password@]h1:p1,h2:p2,…` into seed nodes and shared options. */
export function parseRedisClusterUrl(url: string): RedisClusterSpec {
  const bad = (why: string) => new QueueError("REDIS_URL_INVALID", `invalid Redis Cluster URL '${redactRedisUrl(url)}': ${why}; expected redis+cluster://[user:password@]host1:port1,host2:port2,…`);
  const m = /^(rediss?)\+cluster:\/\/(.*)$/i.exec(url);
  if (!m) throw bad("scheme must be redis+cluster:// or rediss+cluster://");
  const q = m[2]!.indexOf("?");
  let rest = (q >= 0 ? m[2]!.slice(0, q) : m[2]!).replace(/\/$/, "");
  const search = q >= 0 ? m[2]!.slice(q + 1) : "";
  const at = rest.lastIndexOf("@");
  const redisOptions: RedisClusterSpec["redisOptions"] = {};
  if (at >= 0) {
    const info = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = info.indexOf(":");
    const user = colon >= 0 ? info.slice(0, colon) : "";
    const pass = colon >= 0 ? info.slice(colon + 1) : info;
    try {
      if (user !== "") redisOptions.username = decodeURIComponent(user);
      if (pass !== "") redisOptions.password = decodeURIComponent(pass);
    } catch {
      throw bad("user info is not valid percent-encoding");
    }
  }
  if (rest.includes("/")) throw bad("a cluster has no database number (no /db)");
  const items = rest.split(",").filter((x) => x !== "");
  if (items.length === 0) throw bad("no node given");
  if (items.length > MAX_SEED_NODES) throw bad(`more than ${MAX_SEED_NODES} seed nodes`);
  const nodes = items.map((item) => {
    const hm = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]{1,253})(?::(\d{1,5}))?$/.exec(item);
    if (!hm) throw bad(`node '${item.slice(0, 80)}' must be host:port`);
    const port = hm[2] === undefined ? 6379 : Number(hm[2]);
    if (port < 1 || port > 65535) throw bad(`node '${item.slice(0, 80)}': port out of range`);
    return { host: hm[1]!.replace(/^\[(.*)\]$/, "$1"), port };
  });
  if (m[1]!.toLowerCase() === "rediss") redisOptions.tls = { servername: nodes[0]!.host };
  Object.assign(redisOptions, linkOptionsOf(url, search));
  return { nodes, redisOptions };
}

/** A command client: one Redis, or a Redis Cluster (same command interface). */
export type RedisClient = Redis | Cluster;

/**
 * A BullMQ `connection:` for `url` and how to let go of it. For one Redis, plain options (BullMQ makes and
 * closes its own connections); for a Cluster, an ioredis Cluster instance (BullMQ cannot build a Cluster
 * from options) that `close()` quits once the BullMQ object is closed.
 */
export interface BullConnection {
  connection: RedisConnectionOptions | Cluster;
  close(): Promise<void>;
}

export function bullConnection(url: string = DEFAULT_REDIS_URL, role: ConnectionRole = "command"): BullConnection {
  if (!isClusterUrl(url)) return { connection: redisConnection(url, role), close: async () => undefined };
  const cluster = createClusterClient(url, role);
  return {
    connection: cluster,
    close: async () => {
      await cluster.quit().catch(() => cluster.disconnect());
    },
  };
}

function createClusterClient(url: string, role: ConnectionRole): Cluster {
  const spec = parseRedisClusterUrl(url);
  return new Cluster(spec.nodes, {
    redisOptions: { ...spec.redisOptions, ...(role === "blocking" ? blockingOptions(spec.redisOptions.socketTimeout!) : {}) },
    // A failover takes a few seconds (node timeout + election): keep retrying meanwhile.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 200,
    slotsRefreshTimeout: 2000,
    // ioredis asks for the slot map only on MOVED or a node's end; a silent master never ends (its
    // connection keeps retrying), so without a periodic refresh clients follow a failover only after the heal.
    slotsRefreshInterval: 2000,
    ...(role === "blocking" ? { maxRetriesPerRequest: null } : {}),
  } as ConstructorParameters<typeof Cluster>[1]);
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
  Object.assign(opts, linkOptionsOf(url, u.search));
  return opts;
}

/**
 * Connection options for BullMQ (`connection:` of Queue, Worker, QueueEvents) and for `createRedisClient`.
 * `role: "blocking"` sets `maxRetriesPerRequest: null`, which BullMQ Workers and QueueEvents require.
 */
export function redisConnection(url: string = DEFAULT_REDIS_URL, role: ConnectionRole = "command"): RedisConnectionOptions {
  if (isClusterUrl(url)) throw new QueueError("REDIS_URL_INVALID", `'${redactRedisUrl(url)}' names a Redis Cluster: use bullConnection() / createRedisClient() for it`);
  const opts = parseRedisUrl(url);
  return role === "blocking" ? { ...opts, ...blockingOptions(opts.socketTimeout!) } : opts;
}

/** A new ioredis client (a Cluster client for a cluster URL) for plain commands. The caller owns it and must `quit()` it. */
export function createRedisClient(url: string = DEFAULT_REDIS_URL, role: ConnectionRole = "command"): RedisClient {
  return isClusterUrl(url) ? createClusterClient(url, role) : new Redis(redisConnection(url, role));
}

/** Checks a REDIS_URL of either form (one Redis or `redis+cluster://…`); throws REDIS_URL_INVALID naming the problem. */
export function validateRedisUrl(url: string): void {
  if (isClusterUrl(url)) parseRedisClusterUrl(url);
  else parseRedisUrl(url);
}
