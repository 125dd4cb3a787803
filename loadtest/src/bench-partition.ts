/**
 * `farm bench partition --cut-s S [--target host|scheduler]`: a campaign on worker hosts in their own
 * network namespaces (the lab), during which one host's link to Redis (or the scheduler's) goes silent for
 * S seconds and then heals. Exactly once across the union of the hosts' folders, what the cut-off host
 * noticed and when it was back. Needs root (network namespaces).
 * Last line: `episodes= distinct= duplicates= missing= quarantined= host_noticed_s= rejoined_s=`.
 *
 * `--target master`: the farm on a Redis Cluster whose nodes each live in a namespace of their own
 * (lab-cluster.ts); the master serving the farm's keys is cut off instead, its replica must take over, and
 * the old master rejoins as a replica after the heal. The last line adds `failover_s=`.
 */
import { intOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { inLab, type NetLab } from "./net-lab/index.ts";
import { LabFarm } from "./net-lab/lab-farm.ts";
import { runPartition } from "./net-lab/partition-run.ts";
import { LabCluster } from "./net-lab/lab-cluster.ts";
import { runMasterPartition } from "./net-lab/cluster-partition-run.ts";

const out = (line: string): void => void process.stdout.write(`${line}\n`);

/** The common last line's fields. */
function lastLine(r: { episodes: number; distinct: number; duplicates: number; missing: number; quarantined: number; hostNoticedS: number; rejoinedS: number }): string {
  return `episodes=${r.episodes} distinct=${r.distinct} duplicates=${r.duplicates} missing=${r.missing} quarantined=${r.quarantined} host_noticed_s=${r.hostNoticedS.toFixed(1)} rejoined_s=${r.rejoinedS.toFixed(1)}`;
}

/** `--target master`: a cluster in the lab, its master serving the farm's keys cut off for `cutS`. */
async function runMaster(lab: NetLab, o: { cutS: number; perHost: number; stepMs: number; maxSteps: number; lockMs: number; episodes: number; nodeTimeoutMs: number; socketTimeoutMs?: number }): Promise<void> {
  const cluster = await LabCluster.start(lab, { nodeTimeoutMs: o.nodeTimeoutMs });
  try {
    const farm = await LabFarm.start(lab, { devicesPerHost: o.perHost, rttMs: 0, stepMs: o.stepMs, jitterPct: 50, lockMs: o.lockMs, hostLogLevel: "info", redisUrl: o.socketTimeoutMs === undefined ? cluster.url : `${cluster.url}?socket_timeout_ms=${o.socketTimeoutMs}` });
    try {
      const r = await runMasterPartition(farm, cluster, { campaignId: "partition", episodes: o.episodes, maxSteps: o.maxSteps, cutAfterMs: 3000, cutMs: o.cutS * 1000, timeoutMs: (o.cutS + 600) * 1000 });
      out(`farm bench partition --target master: ${lab.hosts.length} hosts × ${o.perHost} devices, ${o.episodes} episodes of ≤${o.maxSteps} steps at ${o.stepMs} ms per step, lock ${o.lockMs} ms; a Redis Cluster of ${cluster.nodes.length} nodes (${cluster.masters} masters, cluster-node-timeout ${o.nodeTimeoutMs} ms, the farm's socket timeout ${o.socketTimeoutMs ?? "10000 (default)"} ms), each in its own namespace; the master serving the farm's keys cut off for ${o.cutS} s, then healed`);
      out(`  campaign ${r.state}; ${r.oldMaster} cut off, its replica ${r.newMaster} promoted (role:${r.newMasterRole}) ${r.failoverS.toFixed(1)} s after the cut; ${r.oldMaster} a replica again ${r.oldMasterRejoinedS.toFixed(1)} s after the heal; no episode finished for ${r.stallS.toFixed(1)} s at most after the cut, ${r.finishedBeforeHeal} finished between the failover and the heal; host_noticed_s / rejoined_s: cut to the hosts' first redis:down / last redis:up (nan: no host logged an outage)`);
      out(`${lastLine(r)} failover_s=${r.failoverS.toFixed(1)}`);
    } finally {
      await farm.close();
    }
  } finally {
    await cluster.close();
  }
}

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const cutS = intOpt(opts, "cut-s", 10, 1, 3600);
    const target = opts.target === undefined ? "host" : String(opts.target);
    if (target !== "host" && target !== "scheduler" && target !== "master") throw new Error(`--target must be host, scheduler or master, got ${target}`);
    const nodeTimeoutMs = intOpt(opts, "node-timeout-ms", 2000, 100, 60_000);
    const socketTimeoutMs = opts["socket-timeout-ms"] === undefined ? undefined : intOpt(opts, "socket-timeout-ms", 10_000, 100, 600_000);
    const hosts = intOpt(opts, "hosts", 2, 2, 8);
    const perHost = intOpt(opts, "devices-per-host", 8);
    const stepMs = intOpt(opts, "step-ms", 100, 0);
    const maxSteps = intOpt(opts, "max-steps", 20);
    const lockMs = intOpt(opts, "lock-ms", 30_000, 1000);
    const episodeS = (stepMs * maxSteps) / 1000;
    // Enough work to outlast the cut on the other hosts.
    const episodes = intOpt(opts, "episodes", Math.ceil(((cutS + 20) / Math.max(0.5, episodeS)) * hosts * perHost));
    await inLab("farm bench partition", hosts, async (lab) => {
      if (target === "master") return runMaster(lab, { cutS, perHost, stepMs, maxSteps, lockMs, episodes, nodeTimeoutMs, ...(socketTimeoutMs !== undefined ? { socketTimeoutMs } : {}) });
      const farm = await LabFarm.start(lab, { devicesPerHost: perHost, rttMs: 0, stepMs, jitterPct: 50, lockMs, hostLogLevel: "info" });
      try {
        const r = await runPartition(farm, { campaignId: "partition", episodes, maxSteps, cutAfterMs: 3000, cutMs: cutS * 1000, target, timeoutMs: (cutS + 600) * 1000 });
        out(`farm bench partition: ${hosts} hosts × ${perHost} devices, ${episodes} episodes of ≤${maxSteps} steps at ${stepMs} ms per step, lock ${lockMs} ms; the ${target === "host" ? "first host's" : "scheduler's"} link to Redis silent for ${cutS} s, then healed`);
        out(`  campaign ${r.state}; the cut-off host finished ${r.hostEpisodesAfterHeal} episodes after the heal${r.schedulerDuringCut !== undefined ? `; the scheduler during the cut: ${r.schedulerDuringCut}` : ""}`);
        out(lastLine(r));
      } finally {
        await farm.close();
      }
    });
  },
};
