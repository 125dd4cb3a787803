/**
 * A Redis Cluster master cut off from the rest while a campaign runs on a LabFarm over a LabCluster: the
 * master serving the farm's hash tag has its link go silent; a replica of it must be promoted (asked of
 * another node: CLUSTER NODES, INFO replication), the campaign must end with every episode committed
 * exactly once across the union of the hosts' folders, and after the heal the old master must rejoin as a
 * replica of the new one.
 */
import { episodeJobId } from "@farm/queue";
import { sleep } from "@farm/time";
import { LAB_PREFIX_KEY, type LabFarm } from "./lab-farm.ts";
import { clusterCli, type LabCluster } from "./lab-cluster.ts";
import { NetLabError } from "./netns.ts";
import { eventTime, exactlyOnceCounts, type PartitionResult } from "./partition-run.ts";

export interface MasterPartitionResult extends Omit<PartitionResult, "hostEpisodesAfterHeal" | "schedulerDuringCut"> {
  /** Cut to a former replica of the cut master serving its slots, every other node `cluster_state:ok`. */
  failoverS: number;
  /** Heal to the old master listed as a replica again (not failed) by the other nodes. */
  oldMasterRejoinedS: number;
  oldMaster: string;
  newMaster: string;
  /** `role:` of the promoted node's INFO replication after the failover. */
  newMasterRole: string;
  /** The longest time after the cut in which no episode of the campaign finished (what the farm felt). */
  stallS: number;
  /** Episodes that finished after the failover and before the heal: the farm followed the promoted replica. */
  finishedBeforeHeal: number;
}

/** The longest gap between episodes' finishes after `cutAt` (from the cut to the first included), and how many finished in (failedOverAt, healAt). */
async function finishes(farm: LabFarm, campaignId: string, episodes: number, cutAt: number, failedOverAt: number, healAt: number): Promise<{ stallS: number; finishedBeforeHeal: number }> {
  const times: number[] = [cutAt];
  for (let i = 0; i < episodes; i++) {
    const t = (await farm.scheduler.queue.getJob(episodeJobId(campaignId, i)))?.finishedOn;
    if (t !== undefined && t > cutAt) times.push(t);
  }
  times.sort((a, b) => a - b);
  let gap = 0;
  for (let k = 1; k < times.length; k++) gap = Math.max(gap, times[k]! - times[k - 1]!);
  return { stallS: gap / 1000, finishedBeforeHeal: times.filter((t) => t > failedOverAt && t < healAt).length };
}

/** The address of the master `address` replicates, per its ROLE (undefined for a master). */
async function masterOf(address: string): Promise<string | undefined> {
  const role = (await clusterCli(address, "role")).split("\n").map((l) => l.trim());
  return role[0] === "slave" ? role[1] : undefined;
}

/**
 * host_noticed_s: cut to the first `redis:down` any host logged (NaN when none did: its clients followed
 * the failover without an outage); rejoined_s: cut to the last `redis:up` after such a down.
 */
function hostTimes(farm: LabFarm, cutAt: number): { hostNoticedS: number; rejoinedS: number } {
  let first: number | undefined;
  let last: number | undefined;
  for (const h of farm.hosts) {
    const log = h.log();
    const down = eventTime(log, "redis:down", cutAt);
    if (down === undefined) continue;
    first = Math.min(first ?? down, down);
    const up = eventTime(log, "redis:up", down);
    if (up !== undefined) last = Math.max(last ?? up, up);
  }
  return { hostNoticedS: first === undefined ? NaN : (first - cutAt) / 1000, rejoinedS: last === undefined ? NaN : (last - cutAt) / 1000 };
}

export async function runMasterPartition(
  farm: LabFarm,
  cluster: LabCluster,
  o: { campaignId: string; episodes: number; maxSteps: number; cutAfterMs: number; cutMs: number; timeoutMs: number },
): Promise<MasterPartitionResult> {
  const old = await cluster.masterOfKey(LAB_PREFIX_KEY);
  const replicas = new Set<string>();
  for (const n of cluster.nodes) if ((await masterOf(n.address)) === old.address) replicas.add(n.address);
  await farm.scheduler.submit({ id: o.campaignId, taskId: farm.taskId, policy: "random", episodes: o.episodes, options: { maxEpisodeSteps: o.maxSteps } });
  await sleep(o.cutAfterMs);
  const cutAt = Date.now();
  await cluster.cut(old);
  const promoted = await cluster.waitForFailover(old, LAB_PREFIX_KEY, Math.max(90_000, o.cutMs));
  const failedOverAt = Date.now();
  const failoverS = (failedOverAt - cutAt) / 1000;
  if (!replicas.has(promoted.address)) throw new NetLabError(`${promoted.address} took over ${old.address}'s slots but was not its replica (its replicas: ${[...replicas].join(", ") || "none"})`);
  const role = /^role:(\w+)/m.exec(await clusterCli(promoted.address, "info", "replication"))?.[1] ?? "unknown";
  await sleep(Math.max(0, cutAt + o.cutMs - Date.now()));
  const healAt = Date.now();
  await cluster.heal(old);
  await cluster.waitForRejoin(old);
  const oldMasterRejoinedS = (Date.now() - healAt) / 1000;
  const follows = await masterOf(old.address);
  if (follows !== promoted.address) throw new NetLabError(`after the heal the old master ${old.address} replicates ${follows ?? "nothing"}, not the promoted ${promoted.address}`);
  const st = await farm.waitFor(o.campaignId, o.timeoutMs);
  // Let every host settle what it finished during the failover (pending files against their claims).
  await sleep(3000);
  return {
    ...(await exactlyOnceCounts(farm, o.episodes, st)),
    ...hostTimes(farm, cutAt),
    failoverS,
    oldMasterRejoinedS,
    oldMaster: old.address,
    newMaster: promoted.address,
    newMasterRole: role,
    ...(await finishes(farm, o.campaignId, o.episodes, cutAt, failedOverAt, healAt)),
    state: st.state,
  };
}
