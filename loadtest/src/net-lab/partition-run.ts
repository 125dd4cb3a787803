/**
 * One partition while a campaign runs on a LabFarm: a worker host's link to Redis goes silent for
 * `cutMs` (or the scheduler's, with `target: "scheduler"`), then heals; the campaign must still end with
 * every episode committed exactly once across the union of the hosts' folders. What the cut-off host did
 * is read from its own log lines (`redis:down`, `redis:up`, with their times).
 */
import { episodeJobId } from "@farm/queue";
import { inspectTrajectories } from "@farm/trajectory";
import { sleep } from "@farm/time";
import type { LabFarm, LabWorkerHost } from "./lab-farm.ts";

export interface PartitionResult {
  episodes: number;
  distinct: number;
  duplicates: number;
  missing: number;
  quarantined: number;
  /** Cut to the host's `redis:down` line (NaN when it never logged one). */
  hostNoticedS: number;
  /** Heal to the host's `redis:up` line after it. */
  rejoinedS: number;
  /** Episodes the cut-off host completed after the heal (it took jobs again). */
  hostEpisodesAfterHeal: number;
  /** The scheduler's answer to a status request during the cut (scheduler target only). */
  schedulerDuringCut?: string;
  state: string;
}

/** The time of the host's first log line with `event` at or after `sinceMs` (its log is JSON lines with `time`). */
export function eventTime(log: string, event: string, sinceMs: number): number | undefined {
  for (const line of log.split("\n")) {
    if (!line.includes(`"${event}"`)) continue;
    try {
      const rec = JSON.parse(line) as { event?: string; time?: number | string };
      const t = typeof rec.time === "number" ? rec.time : Date.parse(String(rec.time));
      if (rec.event === event && t >= sinceMs) return t;
    } catch {
      // not a JSON line
    }
  }
  return undefined;
}

/** Exactly once across the union of the hosts' folders, and the claims' quarantine count (the campaign's commits status). */
export async function exactlyOnceCounts(
  farm: LabFarm,
  episodes: number,
  st: { commits: { quarantined: number } },
): Promise<Pick<PartitionResult, "episodes" | "distinct" | "duplicates" | "missing" | "quarantined">> {
  const summary = await inspectTrajectories(farm.hosts.map((h) => h.out));
  return {
    episodes,
    distinct: summary.uniqueEpisodes,
    duplicates: summary.episodes - summary.uniqueEpisodes,
    missing: episodes - summary.uniqueEpisodes,
    quarantined: st.commits.quarantined,
  };
}

export async function runPartition(
  farm: LabFarm,
  o: { campaignId: string; episodes: number; maxSteps: number; cutAfterMs: number; cutMs: number; target: "host" | "scheduler"; timeoutMs: number },
): Promise<PartitionResult> {
  const victim: LabWorkerHost = farm.hosts[0]!;
  await farm.scheduler.submit({ id: o.campaignId, taskId: farm.taskId, policy: "random", episodes: o.episodes, options: { maxEpisodeSteps: o.maxSteps } });
  await sleep(o.cutAfterMs);
  const cutAt = Date.now();
  let schedulerDuringCut: string | undefined;
  if (o.target === "host") await farm.lab.cut(victim.host);
  else await farm.lab.cutControl();
  if (o.target === "scheduler") {
    await sleep(Math.min(o.cutMs / 2, 5000));
    schedulerDuringCut = await farm.scheduler.status(o.campaignId).then(() => "answered", (e: Error) => e.message);
  }
  await sleep(Math.max(0, cutAt + o.cutMs - Date.now()));
  const healAt = Date.now();
  if (o.target === "host") await farm.lab.heal(victim.host);
  else await farm.lab.healControl();
  const st = await farm.waitFor(o.campaignId, o.timeoutMs);
  // Let the cut-off host settle what it finished in the dark (pending files against their claims).
  await sleep(3000);
  const counts = await exactlyOnceCounts(farm, o.episodes, st);
  let hostEpisodesAfterHeal = 0;
  for (let i = 0; i < o.episodes; i++) {
    const job = await farm.scheduler.queue.getJob(episodeJobId(o.campaignId, i));
    const worker = (job?.returnvalue as { worker?: string } | undefined)?.worker;
    if (worker === victim.name && (job?.finishedOn ?? 0) > healAt) hostEpisodesAfterHeal++;
  }
  const log = victim.log();
  const down = eventTime(log, "redis:down", cutAt);
  const up = eventTime(log, "redis:up", healAt);
  return {
    ...counts,
    hostNoticedS: down === undefined ? NaN : (down - cutAt) / 1000,
    rejoinedS: up === undefined ? NaN : (up - healAt) / 1000,
    hostEpisodesAfterHeal,
    ...(schedulerDuringCut !== undefined ? { schedulerDuringCut } : {}),
    state: st.state,
  };
}
