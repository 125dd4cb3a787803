/**
 * A private Redis Cluster on loopback (Debian's redis-server in cluster mode, created with
 * `redis-cli --cluster create … --cluster-replicas R --cluster-yes`), for tests of the farm on a
 * cluster and through a failover. Every wait is bounded and says what it waited for.
 *
 *   const cluster = await startRedisCluster();           // 3 masters + 3 replicas
 *   cluster.url                                          // redis+cluster://127.0.0.1:p1,127.0.0.1:p2,…
 *   const master = await cluster.masterOfKey("{farm}");  // the node serving that hash tag
 *   master.kill(); await cluster.waitForFailover(master.port);
 *   await cluster.close();
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startManagedChild, type ManagedChild } from "./child.ts";
import { freePort, portFree, waitForPort } from "@farm/net-ports";
import { pollUntil } from "@farm/time";
import { coerceError } from "@farm/errors";

const run = promisify(execFile);

export interface ClusterNode {
  readonly port: number;
  /** SIGKILL the node (a crashed master). */
  kill(): void;
}

export interface LocalRedisCluster {
  /** `redis+cluster://127.0.0.1:p1,…` naming every master as a seed node. */
  readonly url: string;
  readonly nodes: readonly ClusterNode[];
  /** The master currently serving `key`'s slot (a hash tag such as `{farm}` names the slot of every key carrying it). */
  masterOfKey(key: string): Promise<ClusterNode>;
  /** Waits until a node other than `deadPort` serves every slot and the cluster answers `cluster_state:ok`. */
  waitForFailover(deadPort: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface StartRedisClusterOptions {
  masters?: number;
  replicasPerMaster?: number;
  /** cluster-node-timeout: how long a silent master lasts before its replica takes over. Default 1000 ms. */
  nodeTimeoutMs?: number;
  /** Bound on creation (start, create, all nodes agree). Default 60 s: a busy machine is slow. */
  timeoutMs?: number;
  /** The redis-server executable. Default `redis-server` on PATH. */
  bin?: string;
}

/** A free port whose cluster bus port (+10000) is free and valid too. */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const p = await freePort();
    if (p + 10000 > 65535 || taken.has(p) || taken.has(p + 10000)) continue;
    if (await portFree(p + 10000)) {
      taken.add(p);
      taken.add(p + 10000);
      return p;
    }
  }
  throw new Error("no free port pair (port, port+10000) for a Redis Cluster node after 200 tries");
}

/** `redis-cli -h HOST -p PORT …args` (10 s bound): its output. */
export async function redisClusterCli(host: string, port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run("redis-cli", ["-h", host, "-p", String(port), ...args], { timeout: 10_000 });
  return stdout;
}

const cli = (port: number, ...args: string[]): Promise<string> => redisClusterCli("127.0.0.1", port, ...args);

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  let last = "";
  const value = await pollUntil(probe, { timeoutMs, intervalMs: 200, onError: (e) => (last = coerceError(e).message) });
  if (value === undefined) throw new Error(`Redis Cluster: ${what} did not happen within ${timeoutMs} ms${last ? ` (last error: ${last})` : ""}`);
  return value;
}

/**
 * The redis-server arguments of one cluster node listening on `port` (its bus on +10000), its files in `dir`.
 * `announceIp`: the address other nodes and clients must learn (a node in a network namespace of its own).
 */
export function redisClusterNodeArgs(o: { port: number; bind: string; dir: string; nodeTimeoutMs: number; announceIp?: string }): string[] {
  return [
    "--port", String(o.port), "--bind", o.bind, "--protected-mode", o.bind === "127.0.0.1" ? "yes" : "no", "--save", "", "--appendonly", "no", "--dir", o.dir,
    "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", String(o.nodeTimeoutMs),
    ...(o.announceIp ? ["--cluster-announce-ip", o.announceIp] : []),
    // A replica always stands for election (the default refuses one whose link looks stale on a busy machine).
    "--cluster-replica-validity-factor", "0",
    // Sync a new replica at once (the default waits 5 s for more replicas to attach before a diskless
    // sync): until then a replica holds nothing, and a failover in those seconds loses every key.
    "--repl-diskless-sync-delay", "0",
    "--loglevel", "notice", "--logfile", path.join(o.dir, "redis.log"),
  ];
}

/**
 * Makes running cluster-mode nodes one cluster (`redis-cli --cluster create … --cluster-replicas R --cluster-yes`)
 * and waits until every node reports cluster_state:ok and every replica holds its master's data (initial sync
 * done, link up), so a failover keeps the keys. Each wait is bounded by `timeoutMs` and names what it waited for.
 */
export async function assembleRedisCluster(nodes: readonly { host: string; port: number }[], replicas: number, timeoutMs: number): Promise<void> {
  await run("redis-cli", ["--cluster", "create", ...nodes.map((n) => `${n.host}:${n.port}`), "--cluster-replicas", String(replicas), "--cluster-yes"], { timeout: timeoutMs }).catch((e: unknown) => {
    const err = e as { stdout?: string; stderr?: string };
    throw new Error(`redis-cli --cluster create failed: ${coerceError(e).message}\n${(err.stdout ?? "").slice(-2000)}${(err.stderr ?? "").slice(-1000)}`);
  });
  // Every node must see the whole cluster as ok before clients use it.
  for (const n of nodes) await until(`node ${n.host}:${n.port} reporting cluster_state:ok`, timeoutMs, async () => ((await redisClusterCli(n.host, n.port, "cluster", "info")).includes("cluster_state:ok") ? true : undefined));
  for (const n of nodes) {
    await until(`replica ${n.host}:${n.port} in sync with its master`, timeoutMs, async () => {
      const info = await redisClusterCli(n.host, n.port, "info", "replication");
      if (info.includes("role:master")) return true;
      return info.includes("master_link_status:up") && !info.includes("master_sync_in_progress:1") ? true : undefined;
    });
  }
}

/** Starts masters × (1 + replicas) redis-server nodes in cluster mode and creates the cluster. */
export async function startRedisCluster(opts: StartRedisClusterOptions = {}): Promise<LocalRedisCluster> {
  const masters = opts.masters ?? 3;
  const replicas = opts.replicasPerMaster ?? 1;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const bin = opts.bin ?? "redis-server";
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-redis-cluster-"));
  const taken = new Set<number>();
  const children = new Map<number, ManagedChild>();
  const close = async () => {
    await Promise.all([...children.values()].map((c) => c.close()));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports: number[] = [];
    for (let i = 0; i < masters * (1 + replicas); i++) ports.push(await clusterPort(taken));
    for (const port of ports) {
      const nodeDir = path.join(dir, String(port));
      fs.mkdirSync(nodeDir);
      const args = redisClusterNodeArgs({ port, bind: "127.0.0.1", dir: nodeDir, nodeTimeoutMs: opts.nodeTimeoutMs ?? 1000 });
      children.set(port, startManagedChild(bin, args));
    }
    for (const port of ports) {
      await waitForPort(port, 15_000).catch((e: unknown) => {
        throw new Error(`redis-server (cluster node) did not start on port ${port} (is redis-server installed? run: bash deploy/bootstrap.sh)\n${children.get(port)!.output()}`, { cause: e });
      });
    }
    await assembleRedisCluster(ports.map((port) => ({ host: "127.0.0.1", port })), replicas, timeoutMs);
    const nodes = ports.map<ClusterNode>((port) => ({ port, kill: () => children.get(port)!.process.kill("SIGKILL") }));
    const alive = () => nodes.filter((n) => children.get(n.port)!.process.exitCode === null && children.get(n.port)!.process.signalCode === null);
    const cluster: LocalRedisCluster = {
      url: `redis+cluster://${ports.slice(0, masters).map((p) => `127.0.0.1:${p}`).join(",")}`,
      nodes,
      async masterOfKey(key) {
        const slot = Number((await cli(alive()[0]!.port, "cluster", "keyslot", key)).trim());
        return until(`finding the master of slot ${slot}`, 30_000, async () => {
          for (const n of alive()) {
            const role = await cli(n.port, "role").catch(() => "");
            if (!role.startsWith("master")) continue;
            const shards = await cli(n.port, "cluster", "nodes");
            const self = shards.split("\n").find((l) => l.includes("myself"));
            if (self && slotRangesInclude(self.trim().split(/\s+/).slice(8), slot)) return n;
          }
          return undefined;
        });
      },
      async waitForFailover(deadPort, waitMs = 60_000) {
        await until(`failover away from master ${deadPort} (a replica promoted, cluster_state:ok)`, waitMs, async () => {
          // The dead master must be flagged failed first: before node-timeout passes, every node still says ok.
          const live = alive().filter((n) => n.port !== deadPort);
          const view = await cli(live[0]!.port, "cluster", "nodes");
          const dead = view.split("\n").find((l) => l.includes(`:${deadPort}@`));
          if (!dead || !/\bfail\b/.test(dead.split(" ")[2] ?? "") || ownsSlotRange(dead)) return undefined;
          for (const n of live) if (!(await cli(n.port, "cluster", "info")).includes("cluster_state:ok")) return undefined;
          return true;
        });
      },
      close,
    };
    return cluster;
  } catch (e) {
    await close();
    throw e;
  }
}

/** Whether a `CLUSTER NODES` line still lists any slot. */
function ownsSlotRange(line: string): boolean {
  return line.trim().split(/\s+/).slice(8).some((r) => !r.startsWith("["));
}

/** Whether `CLUSTER NODES` slot fields (9…: `0-5460`, `5461`, `[…]` migrations) include `slot`. */
export function slotRangesInclude(ranges: readonly string[], slot: number): boolean {
  for (const range of ranges) {
    if (range.startsWith("[")) continue;
    const [a, b] = range.split("-").map(Number);
    if (slot >= a! && slot <= (b ?? a)!) return true;
  }
  return false;
}
