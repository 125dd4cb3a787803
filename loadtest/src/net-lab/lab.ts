/**
 * The network lab: a hub namespace (Redis, the scheduler) and one namespace per worker host, each joined
 * to the hub by its own veth pair, so a host reaches Redis by a lab address over a real link, not
 * loopback. A link can be cut silently (`ip link set … down`: no reset reaches either side) and healed,
 * and a delay relay on the hub adds latency per host (no netem on this kernel).
 *
 * Names carry this process's pid and a random id (`flab<pid>x<id>-hub`, `-h1`, …); `close()` removes
 * them, and `create` first removes those of runs whose process is gone.
 */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import crypto from "node:crypto";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { acquireLabLock } from "./lab-lock.ts";
import { runUntilSignal } from "@farm/lifecycle";
import { ip, labUnavailableReason, listNamespaces, removeStaleLabs, LAB_PREFIX, NetLabError } from "./netns.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));

export interface LabHost {
  /** 1-based. */
  index: number;
  namespace: string;
  /** This host's address on its link. */
  address: string;
  /** The hub's address on this host's link: where the host finds Redis (or its relay). */
  hubAddress: string;
  /** The link's two ends: in the hub's namespace and in the host's. */
  hubEnd: string;
  hostEnd: string;
}

export interface LabRelay {
  /** Where the host connects: hubAddress:port. */
  port: number;
  /** Requests (client writes) and connections relayed so far. */
  stats(): Promise<{ connections: number; requests: number }>;
  close(): void;
}

/** The link between this process's namespace (the scheduler's, the bench's) and the hub. */
export interface ControlLink {
  /** The hub's address as seen from here: where this process finds Redis. */
  hubAddress: string;
  address: string;
  hereEnd: string;
  hubEnd: string;
}

export class NetLab {
  private readonly children = new Set<ChildProcess>();
  private closed = false;
  /** Releases the machine-wide lab lock (lab-lock.ts). */
  private unlock: () => void = () => undefined;

  private constructor(
    readonly runId: string,
    readonly hub: string,
    readonly hosts: readonly LabHost[],
    readonly control: ControlLink,
  ) {}

  static async create(opts: { hosts: number }): Promise<NetLab> {
    if (!Number.isInteger(opts.hosts) || opts.hosts < 1 || opts.hosts > 32) throw new NetLabError(`hosts must be 1..32, got ${opts.hosts}`);
    await removeStaleLabs();
    const short = crypto.randomBytes(2).toString("hex");
    const runId = `${LAB_PREFIX}${process.pid}x${short}`;
    const hub = `${runId}-hub`;
    const hosts: LabHost[] = Array.from({ length: opts.hosts }, (_, k) => ({
      index: k + 1,
      namespace: `${runId}-h${k + 1}`,
      address: `10.231.${k + 1}.2`,
      hubAddress: `10.231.${k + 1}.1`,
      hubEnd: `fl${short}h${k + 1}`,
      hostEnd: `fl${short}p${k + 1}`,
    }));
    const control: ControlLink = { address: "10.231.0.1", hubAddress: "10.231.0.2", hereEnd: `fl${short}c0`, hubEnd: `fl${short}s0` };
    const lab = new NetLab(runId, hub, hosts, control);
    lab.unlock = await acquireLabLock(runId);
    try {
      await lab.build();
    } catch (e) {
      await lab.close();
      throw e;
    }
    return lab;
  }

  private async build(): Promise<void> {
    for (const ns of [this.hub, ...this.hosts.map((h) => h.namespace)]) {
      await ip("netns", "add", ns);
      await ip("-n", ns, "link", "set", "lo", "up");
    }
    for (const h of this.hosts) {
      await ip("-n", this.hub, "link", "add", h.hubEnd, "type", "veth", "peer", "name", h.hostEnd, "netns", h.namespace);
      await ip("-n", this.hub, "addr", "add", `${h.hubAddress}/30`, "dev", h.hubEnd);
      await ip("-n", h.namespace, "addr", "add", `${h.address}/30`, "dev", h.hostEnd);
      await this.heal(h);
    }
    // This process's side stays in its own namespace; removing the hub's namespace removes the pair.
    const c = this.control;
    await ip("link", "add", c.hereEnd, "type", "veth", "peer", "name", c.hubEnd, "netns", this.hub);
    await ip("addr", "add", `${c.address}/30`, "dev", c.hereEnd);
    await ip("-n", this.hub, "addr", "add", `${c.hubAddress}/30`, "dev", c.hubEnd);
    await this.healControl();
  }

  /** A process inside namespace `ns` (argv, no shell); killed by close() if still running. */
  spawn(ns: string, command: string, args: readonly string[], opts: SpawnOptions = {}): ChildProcess {
    const child = spawn("ip", ["netns", "exec", ns, command, ...args], { stdio: ["pipe", "pipe", "pipe"], ...opts });
    this.children.add(child);
    child.once("exit", () => this.children.delete(child));
    return child;
  }

  /**
   * A delay relay in the hub: `host` connects to hubAddress:port, which reaches 127.0.0.1:toPort in the hub
   * with `rttMs` (whole ms) added to every round trip, ⌈rttMs/2⌉ on the way there and ⌊rttMs/2⌋ back.
   */
  async relay(host: LabHost, toPort: number, rttMs: number): Promise<LabRelay> {
    if (!Number.isInteger(rttMs) || rttMs < 0) throw new NetLabError(`the relay's round trip must be whole milliseconds >= 0, got ${rttMs}`);
    const up = String(Math.ceil(rttMs / 2));
    const down = String(Math.floor(rttMs / 2));
    const child = this.spawn(this.hub, process.execPath, ["--import", "tsx", path.join(HERE, "relay-main.ts"), host.hubAddress, "0", "127.0.0.1", String(toPort), up, down], { cwd: HERE });
    const port = await new Promise<number>((resolve, reject) => {
      let out = "";
      let err = "";
      child.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        const m = /relay listening (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
      child.once("exit", (code) => reject(new NetLabError(`delay relay for host ${host.index} exited (${code}): ${err.trim().slice(0, 500)}`)));
    });
    const lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const stats = async (): Promise<{ connections: number; requests: number }> => {
      child.stdin!.write("stats\n");
      for (let next = await lines.next(); !next.done; next = await lines.next()) {
        const m = /^stats connections=(\d+) requests=(\d+)/.exec(next.value);
        if (m) return { connections: Number(m[1]), requests: Number(m[2]) };
      }
      throw new NetLabError(`delay relay for host ${host.index} has exited`);
    };
    return { port, stats, close: () => void child.kill("SIGTERM") };
  }

  /** A silent partition: both ends down, so packets vanish and no reset or ICMP reaches either side. */
  async cut(host: LabHost): Promise<void> {
    await ip("-n", this.hub, "link", "set", host.hubEnd, "down");
    await ip("-n", host.namespace, "link", "set", host.hostEnd, "down");
  }

  async heal(host: LabHost): Promise<void> {
    await ip("-n", this.hub, "link", "set", host.hubEnd, "up");
    await ip("-n", host.namespace, "link", "set", host.hostEnd, "up");
  }

  /** Cuts this process's (the scheduler's) link to the hub, silently. */
  async cutControl(): Promise<void> {
    await ip("link", "set", this.control.hereEnd, "down");
    await ip("-n", this.hub, "link", "set", this.control.hubEnd, "down");
  }

  async healControl(): Promise<void> {
    await ip("link", "set", this.control.hereEnd, "up");
    await ip("-n", this.hub, "link", "set", this.control.hubEnd, "up");
  }

  /** Kills the lab's processes and removes its namespaces (their links go with them). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.children) c.kill("SIGKILL");
    for (const ns of [...this.hosts.map((h) => h.namespace), this.hub]) await ip("netns", "del", ns).catch(() => undefined);
    // Namespaces added to the lab by other modules (a lab cluster's nodes) carry its run id too.
    const extra = (await listNamespaces().catch(() => [])).filter((ns) => ns.startsWith(`${this.runId}-`));
    for (const ns of extra) await ip("netns", "del", ns).catch(() => undefined);
    this.unlock();
  }
}

/**
 * What a benchmark does with a lab: refuse at once where namespaces cannot be made (naming why), make a lab
 * of `hosts`, run `work` in it, and remove the lab at the end or on Ctrl-C (then exit 130).
 */
export async function inLab<T>(bench: string, hosts: number, work: (lab: NetLab) => Promise<T>): Promise<T> {
  const reason = await labUnavailableReason();
  if (reason) throw new NetLabError(`${bench}: ${reason}`);
  return runUntilSignal(async (stop) => {
    const lab = await NetLab.create({ hosts });
    stop.addEventListener("abort", () => void lab.close().then(() => process.exit(130)), { once: true });
    try {
      return await work(lab);
    } finally {
      await lab.close();
    }
  });
}
