/**
 * What crosses the link per episode, by kind: Redis's MONITOR stream during a campaign, each command
 * counted under its name and the last part of its key, a script under its name (BullMQ's scripts by their
 * SHA1, ours by their first key), commands a script runs not counted (no round trip of their own), and split by who sent it: the worker hosts (their relays reach Redis from 127.0.0.1
 * in the hub) or the scheduler (over the control link). MONITOR slows Redis a little: opt-in
 * (`farm bench net --census`), never part of the figures on the last line.
 */
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { RedisClient } from "@farm/queue";

/** Where the hosts' commands come from: their relays run in the hub and connect over loopback. */
const HOST_SOURCE = "127.0.0.1:";
/** Kinds kept apart; past this, the rest are counted as `other` (a census stays bounded). */
const MAX_KINDS = 200;

/** SHA1 → name of every script BullMQ ships (ioredis runs a script by the SHA1 of its text). */
async function bullScriptNames(): Promise<Map<string, string>> {
  const require = createRequire(import.meta.url);
  const dir = path.join(path.dirname(require.resolve("bullmq/package.json")), "dist/esm/scripts");
  const out = new Map<string, string>();
  for (const f of (await readdir(dir)).filter((n) => n.endsWith(".js") && n !== "index.js")) {
    const mod = (await import(pathToFileURL(path.join(dir, f)).href)) as Record<string, { name?: string; content?: string }>;
    for (const s of Object.values(mod)) {
      if (typeof s?.content === "string" && typeof s.name === "string") out.set(createHash("sha1").update(s.content).digest("hex"), s.name);
    }
  }
  return out;
}

/** A key by its last part (`{lab}:campaign:c1:claims` → `…:claims`); ids and other values as `…`. */
function keyKind(key: string): string {
  const last = key.split(":").pop() ?? "";
  return /^[a-z][a-z-]*$/i.test(last) && key.includes(":") ? `…:${last}` : "…";
}

export interface CensusCounts {
  hosts: Map<string, number>;
  scheduler: Map<string, number>;
}

export class CommandCensus {
  private readonly counts: CensusCounts = { hosts: new Map(), scheduler: new Map() };

  private constructor(
    private readonly client: RedisClient,
    private readonly scripts: Map<string, string>,
  ) {}

  /** Starts counting every command the Redis of `redis` runs from now on (one Redis: a Cluster has no MONITOR). */
  static async start(redis: RedisClient): Promise<CommandCensus> {
    if (!("monitor" in redis)) throw new Error("the command census needs one Redis (MONITOR), not a Cluster");
    const client = redis.duplicate();
    const census = new CommandCensus(client, await bullScriptNames());
    const monitor = await client.monitor();
    monitor.on("monitor", (_time: string, args: string[], source: string) => census.note(args, source));
    census.stopMonitor = () => monitor.disconnect();
    return census;
  }

  private stopMonitor: () => void = () => undefined;

  private kindOf(args: string[]): string {
    const cmd = (args[0] ?? "?").toLowerCase();
    if (cmd !== "evalsha" && cmd !== "eval") return args.length > 1 ? `${cmd}(${keyKind(args[1]!)})` : cmd;
    const named = cmd === "evalsha" ? this.scripts.get(args[1] ?? "") : undefined;
    if (named) return named;
    // Our own scripts: named by what they touch (`…:claims` is the commit claim).
    return `${cmd}(${Number(args[2]) > 0 ? keyKind(args[3] ?? "") : ""})`;
  }

  private note(args: string[], source: string): void {
    // Commands a script runs show with source `lua`: they cost no round trip of their own.
    if (source === "lua") return;
    const side = source.startsWith(HOST_SOURCE) ? this.counts.hosts : this.counts.scheduler;
    let kind = this.kindOf(args);
    if (!side.has(kind) && side.size >= MAX_KINDS) kind = "other";
    side.set(kind, (side.get(kind) ?? 0) + 1);
  }

  /** The counts so far (live). */
  counted(): CensusCounts {
    return this.counts;
  }

  /** Stops counting; the counts so far. */
  close(): CensusCounts {
    this.stopMonitor();
    this.client.disconnect();
    return this.counts;
  }
}

/** `kind n.nn, …` per episode, most frequent first. */
export function perEpisode(counts: Map<string, number>, episodes: number): string {
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${(n / Math.max(1, episodes)).toFixed(2)}`)
    .join(", ");
}
