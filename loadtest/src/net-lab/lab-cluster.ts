/**
 * A Redis Cluster in the network lab: every node (masters and replicas) in a namespace of its own, joined
 * to the hub by its own veth pair (node `n`: `10.232.n.2`, the hub `10.232.n.1`). The hub forwards between
 * its links, and the hosts, the nodes and this process (over the control link) route `10.232.0.0/16`
 * through it, so a node reaches every other node, the hosts and the scheduler by lab addresses, and a cut
 * node link leaves that node alone in the dark (its replica takes over once `cluster-node-timeout` passes).
 * The routes go with the links when the lab's namespaces are removed.
 */
import { execFile, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { pollUntil } from "@farm/time";
import type { NetLab } from "./lab.ts";
import { ip, NetLabError } from "./netns.ts";
import { coerceError } from "@farm/errors";
import { assembleRedisCluster, redisClusterCli, redisClusterNodeArgs, slotRangesInclude } from "@farm/local-services";

const run = promisify(execFile);
const NODE_NET = "10.232";
/** Every node listens on the same port in its own namespace (its bus on +10000). */
export const CLUSTER_NODE_PORT = 6379;

export interface LabClusterNode {
  /** 1-based. */
  index: number;
  namespace: string;
  address: string;
  hubAddress: string;
  hubEnd: string;
  nodeEnd: string;
  child: ChildProcess;
}

export interface LabClusterOptions {
  masters?: number;
  replicasPerMaster?: number;
  /** cluster-node-timeout: how long a silent master lasts before its replica takes over. Default 2000 ms. */
  nodeTimeoutMs?: number;
  /** Bound on creation (start, create, every node agrees, every replica in sync). Default 90 s. */
  timeoutMs?: number;
}

/** `redis-cli -h ADDRESS -p 6379 …args`, from this process's namespace over the lab's routes. */
export function clusterCli(address: string, ...args: string[]): Promise<string> {
  return redisClusterCli(address, CLUSTER_NODE_PORT, ...args);
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  let last = "";
  const value = await pollUntil(probe, { timeoutMs, intervalMs: 200, onError: (e) => (last = coerceError(e).message) });
  if (value === undefined) throw new NetLabError(`lab Redis Cluster: ${what} did not happen within ${timeoutMs} ms${last ? ` (last error: ${last.slice(0, 300)})` : ""}`);
  return value;
}

/** The `CLUSTER NODES` line of the node at `address`, as seen by the node at `from`. */
export async function nodeLine(from: string, address: string): Promise<string | undefined> {
  return (await clusterCli(from, "cluster", "nodes")).split("\n").find((l) => l.includes(` ${address}:${CLUSTER_NODE_PORT}@`));
}

export class LabCluster {
  private closed = false;

  private constructor(
    readonly lab: NetLab,
    readonly nodes: readonly LabClusterNode[],
    readonly masters: number,
    private readonly dir: string,
  ) {}

  /** `redis+cluster://…` naming every node as a seed (any one that answers tells the client the rest). */
  get url(): string {
    return `redis+cluster://${this.nodes.map((n) => `${n.address}:${CLUSTER_NODE_PORT}`).join(",")}`;
  }

  static async start(lab: NetLab, opts: LabClusterOptions = {}): Promise<LabCluster> {
    const masters = opts.masters ?? 3;
    const replicas = opts.replicasPerMaster ?? 1;
    const total = masters * (1 + replicas);
    if (!Number.isInteger(total) || masters < 3 || total > 32) throw new NetLabError(`a lab cluster needs 3..32 nodes with at least 3 masters (a failover needs a majority of masters), got ${masters} masters × ${1 + replicas}`);
    const timeoutMs = opts.timeoutMs ?? 90_000;
    const short = lab.runId.slice(lab.runId.lastIndexOf("x") + 1);
    const dir = mkdtempSync(path.join(os.tmpdir(), "farm-lab-cluster-"));
    const nodes: LabClusterNode[] = [];
    const cluster = new LabCluster(lab, nodes, masters, dir);
    try {
      await cluster.route();
      for (let n = 1; n <= total; n++) nodes.push(await cluster.addNode(n, short, opts.nodeTimeoutMs ?? 2000));
      await cluster.create(replicas, timeoutMs);
    } catch (e) {
      await cluster.close();
      throw e;
    }
    return cluster;
  }

  /** The hub forwards between its links; hosts and this process reach the nodes' net through it. */
  private async route(): Promise<void> {
    await run("ip", ["netns", "exec", this.lab.hub, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"], { timeout: 10_000 }).catch((e: Error) => {
      throw new NetLabError(`cannot turn on forwarding in the lab's hub: ${e.message}`);
    });
    for (const h of this.lab.hosts) await ip("-n", h.namespace, "route", "add", `${NODE_NET}.0.0/16`, "via", h.hubAddress);
    // In this process's namespace, bound to the control link: removed with it when the hub goes.
    await ip("route", "replace", `${NODE_NET}.0.0/16`, "via", this.lab.control.hubAddress, "dev", this.lab.control.hereEnd);
  }

  private async addNode(n: number, short: string, nodeTimeoutMs: number): Promise<LabClusterNode> {
    const namespace = `${this.lab.runId}-r${n}`;
    const hubAddress = `${NODE_NET}.${n}.1`;
    const address = `${NODE_NET}.${n}.2`;
    const hubEnd = `fl${short}r${n}`;
    const nodeEnd = `fl${short}q${n}`;
    await ip("netns", "add", namespace);
    await ip("-n", namespace, "link", "set", "lo", "up");
    await ip("-n", this.lab.hub, "link", "add", hubEnd, "type", "veth", "peer", "name", nodeEnd, "netns", namespace);
    await ip("-n", this.lab.hub, "addr", "add", `${hubAddress}/30`, "dev", hubEnd);
    await ip("-n", namespace, "addr", "add", `${address}/30`, "dev", nodeEnd);
    await ip("-n", this.lab.hub, "link", "set", hubEnd, "up");
    await ip("-n", namespace, "link", "set", nodeEnd, "up");
    await ip("-n", namespace, "route", "replace", "default", "via", hubAddress);
    const nodeDir = path.join(this.dir, `r${n}`);
    mkdirSync(nodeDir);
    // Other nodes and clients must learn the node's lab address, never one they cannot route to.
    const child = this.lab.spawn(namespace, "redis-server", redisClusterNodeArgs({ port: CLUSTER_NODE_PORT, bind: "0.0.0.0", dir: nodeDir, nodeTimeoutMs, announceIp: address }));
    return { index: n, namespace, address, hubAddress, hubEnd, nodeEnd, child };
  }

  private async create(replicas: number, timeoutMs: number): Promise<void> {
    for (const n of this.nodes) await until(`node ${n.address} answering PING`, 30_000, async () => ((await clusterCli(n.address, "ping")).trim() === "PONG" ? true : undefined));
    await assembleRedisCluster(this.nodes.map((n) => ({ host: n.address, port: CLUSTER_NODE_PORT })), replicas, timeoutMs).catch((e: unknown) => {
      throw new NetLabError(`lab Redis Cluster: ${coerceError(e).message}`);
    });
  }

  /** The master serving `key`'s slot now, asked of the nodes that answer. */
  async masterOfKey(key: string, except?: LabClusterNode): Promise<LabClusterNode> {
    const live = this.nodes.filter((n) => n !== except);
    const slot = Number((await clusterCli(live[0]!.address, "cluster", "keyslot", key)).trim());
    return until(`finding the master of slot ${slot}`, 30_000, async () => {
      const view = await clusterCli(live[0]!.address, "cluster", "nodes");
      for (const line of view.split("\n")) {
        const f = line.trim().split(/\s+/);
        if (!/\bmaster\b/.test(f[2] ?? "") || /\bfail\b/.test(f[2] ?? "") || !slotRangesInclude(f.slice(8), slot)) continue;
        const node = live.find((n) => f[1]?.startsWith(`${n.address}:`));
        if (node) return node;
      }
      return undefined;
    });
  }

  /** A silent partition of one node: both ends of its link down. */
  async cut(node: LabClusterNode): Promise<void> {
    await ip("-n", this.lab.hub, "link", "set", node.hubEnd, "down");
    await ip("-n", node.namespace, "link", "set", node.nodeEnd, "down");
  }

  async heal(node: LabClusterNode): Promise<void> {
    await ip("-n", this.lab.hub, "link", "set", node.hubEnd, "up");
    await ip("-n", node.namespace, "link", "set", node.nodeEnd, "up");
    // A link going down takes the routes through it along; the connected /30 comes back, the default does not.
    await ip("-n", node.namespace, "route", "replace", "default", "via", node.hubAddress);
  }

  /**
   * Waits until another node flags `old` as failed, holds none of its slots, a former replica of it is a
   * master serving them, and every other node says cluster_state:ok; the promoted node.
   */
  async waitForFailover(old: LabClusterNode, slotKey: string, timeoutMs = 90_000): Promise<LabClusterNode> {
    const others = this.nodes.filter((n) => n !== old);
    await until(`failover away from master ${old.address}`, timeoutMs, async () => {
      const line = await nodeLine(others[0]!.address, old.address);
      const f = line?.trim().split(/\s+/) ?? [];
      if (!/\bfail\b/.test(f[2] ?? "") || f.slice(8).some((r) => !r.startsWith("["))) return undefined;
      for (const n of others) if (!(await clusterCli(n.address, "cluster", "info")).includes("cluster_state:ok")) return undefined;
      return true;
    });
    return this.masterOfKey(slotKey, old);
  }

  /** Waits until the other nodes list `old` as a replica that is no longer failed (it rejoined after a heal). */
  async waitForRejoin(old: LabClusterNode, timeoutMs = 90_000): Promise<string> {
    const other = this.nodes.find((n) => n !== old)!;
    return until(`${old.address} rejoining as a replica`, timeoutMs, async () => {
      const flags = (await nodeLine(other.address, old.address))?.trim().split(/\s+/)[2] ?? "";
      const role = await clusterCli(old.address, "role");
      return /\bslave\b/.test(flags) && !/fail/.test(flags) && role.startsWith("slave") ? flags : undefined;
    });
  }

  /** Stops the nodes and removes their namespaces (their links and routes go with them). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const n of this.nodes) n.child.kill("SIGKILL");
    for (const n of this.nodes) await ip("netns", "del", n.namespace).catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
