/** What `status` reports about a campaign, and the summary written when it finishes. Pure functions. */
import type { CampaignRecord, CampaignState } from "./campaign-store.ts";
import type { CampaignSpec } from "./campaign-spec.ts";
import type { CommitStats } from "@farm/queue";

const NO_COMMITS: CommitStats = { committed: 0, duplicatesPrevented: 0, completedFromClaim: 0, quarantined: 0, retriesByCause: {} };

export interface CampaignSummary {
  state: CampaignState;
  episodes: number;
  completed: number;
  failed: number;
  /** Episodes never run because the campaign was cancelled. */
  notRun: number;
  byOutcome: Record<string, number>;
  byCause: Record<string, number>;
  /**
   * Failed jobs by the `[CODE]` of their failedReason: a `QueueErrorCode` of @farm/queue (e.g. TASK_UNKNOWN,
   * POLICY_INVALID, TASK_NOT_RUNNABLE, DEVICE_TROUBLE, DEVICE_UNUSABLE, POLICY_FAILED, CANCELLED), or "error" =
   * retries exhausted on a plain error without a code. Keyed by string: a code read back from Redis is not trusted.
   */
  failuresByCode: Record<string, number>;
  /** Over completed episodes; null when none completed. */
  meanReward: number | null;
  meanSteps: number | null;
  totalSteps: number;
  durationSec: number;
  episodesPerSec: number;
  /**
   * Farm-wide commit accounting: committed = episodes claimed (one record each, across all hosts);
   * duplicatesPrevented = second records written but refused by the claim; completedFromClaim = retries
   * answered from the claim without running; quarantined = loser files moved out of readers' sight;
   * retriesByCause = DEVICE_TROUBLE, DEVICE_UNUSABLE, POLICY_FAILED, CANCELLED, LOCK_LOST, STALLED.
   */
  commits: CommitStats;
}

/** A grouped campaign's groups (issue 38): complete = every member committed. */
export interface GroupStats {
  size: number;
  /** Groups planned so far (episodes / size, re-sampled ones included). */
  total: number;
  completed: number;
  /** Completed groups whose rewards were all equal (no signal for GRPO); they stay in the data. */
  uniform: number;
  /** Uniform groups followed by a new instance, and the campaign's limit. */
  resampled: number;
  resampleLimit: number;
  /** Groups with a member that failed for good (not a whole group: no statistics). */
  failed: number;
  /** Mean over completed groups of the group's mean reward and of its reward standard deviation; null when none. */
  meanReward: number | null;
  meanStd: number | null;
}

export function groupStatsOf(rec: CampaignRecord): GroupStats | undefined {
  const K = rec.spec.groupSize;
  if (!K) return undefined;
  const n = rec.groupsCompleted;
  return {
    size: K,
    total: Math.floor(rec.episodes / K),
    completed: n,
    uniform: rec.groupsUniform,
    resampled: rec.groupsResampled,
    resampleLimit: rec.spec.resampleUniformGroups ?? 0,
    failed: rec.groupsFailed,
    meanReward: n > 0 ? rec.groupMeanSum / n : null,
    meanStd: n > 0 ? rec.groupStdSum / n : null,
  };
}

export interface CampaignStatus {
  /** Grouped campaigns only. */
  groups?: GroupStats;
  /** The campaign's stream of committed episodes: entries kept, and its consumer groups (the first 20) with pending and lag. */
  stream?: { length: number; consumerGroups: { name: string; pending: number; lag: number | null }[] };
  id: string;
  state: CampaignState;
  /** The spec without its goals (up to 10,000 of them would swell every status read); `goals` counts them. */
  spec: Omit<CampaignSpec, "goals">;
  /** How many goals the campaign cycles through (absent: the task's description for every episode). */
  goals?: number;
  episodes: number;
  /** Jobs put on the queue so far (indexes 0 … enqueued-1). */
  enqueued: number;
  completed: number;
  failed: number;
  /** completed + failed. */
  finished: number;
  /** Enqueued, not yet finished (waiting, delayed, running). */
  inFlight: number;
  /** Of those, currently being run by a worker. */
  running: number;
  waiting: number;
  createdAt: string;
  finishedAt?: string;
  /** Mean rate since creation (to the last finished episode once finished). */
  episodesPerSec: number;
  /** Seconds to go at that rate; null when unknown or finished. */
  etaSec: number | null;
  summary?: CampaignSummary;
  /** Farm-wide commit accounting so far (see CampaignSummary.commits). */
  commits: CommitStats;
  /** Finished episodes so far by outcome (terminated, truncated) and failed jobs by code (the fleet page's breakdown). */
  byOutcome: Record<string, number>;
  failuresByCode: Record<string, number>;
}

function rateOf(rec: CampaignRecord, nowMs: number): number {
  const end = rec.finishedAtMs ?? (rec.state === "running" ? nowMs : rec.lastFinishedAtMs ?? nowMs);
  const sec = Math.max(0.001, (end - rec.createdAtMs) / 1000);
  return (rec.completed + rec.failed) / sec;
}

export function summarize(rec: CampaignRecord, finalState: CampaignState, nowMs: number, commits: CommitStats = NO_COMMITS): CampaignSummary {
  const finished = rec.completed + rec.failed;
  return {
    state: finalState,
    episodes: rec.episodes,
    completed: rec.completed,
    failed: rec.failed,
    notRun: rec.episodes - finished,
    byOutcome: rec.byOutcome,
    byCause: rec.byCause,
    failuresByCode: rec.failuresByCode,
    meanReward: rec.completed > 0 ? rec.rewardSum / rec.completed : null,
    meanSteps: rec.completed > 0 ? rec.stepsSum / rec.completed : null,
    totalSteps: rec.stepsSum,
    durationSec: Math.max(0, (nowMs - rec.createdAtMs) / 1000),
    episodesPerSec: finished / Math.max(0.001, (nowMs - rec.createdAtMs) / 1000),
    commits,
    ...(rec.spec.groupSize ? { groups: groupStatsOf(rec)! } : {}),
  };
}

export function statusOf(rec: CampaignRecord, inFlight: number, running: number, nowMs: number, commits: CommitStats = NO_COMMITS): CampaignStatus {
  const finished = rec.completed + rec.failed;
  const rate = rateOf(rec, nowMs);
  const remaining = rec.episodes - finished;
  const { goals, ...spec } = rec.spec;
  const status: CampaignStatus = {
    id: rec.spec.id,
    state: rec.state,
    spec,
    ...(goals ? { goals: goals.length } : {}),
    episodes: rec.episodes,
    enqueued: rec.nextIndex,
    completed: rec.completed,
    failed: rec.failed,
    finished,
    inFlight,
    running: Math.min(running, inFlight),
    waiting: Math.max(0, inFlight - running),
    createdAt: new Date(rec.createdAtMs).toISOString(),
    episodesPerSec: rate,
    etaSec: rec.state === "running" && rate > 0 ? remaining / rate : null,
    commits,
    byOutcome: { ...rec.byOutcome },
    failuresByCode: { ...rec.failuresByCode },
  };
  const groups = groupStatsOf(rec);
  if (groups) status.groups = groups;
  if (rec.finishedAtMs !== undefined) status.finishedAt = new Date(rec.finishedAtMs).toISOString();
  if (rec.summary !== undefined) status.summary = rec.summary as CampaignSummary;
  return status;
}
