/**
 * The one exactly-once commit of a finished episode, for campaign jobs (episode-processor.ts) and remote
 * worlds (remote-env/commit-remote.ts) alike: pending marker → publish on this host → claim farm-wide (the
 * commit; with the job's lock as owner when there is one) → marker cleared. The failure windows between
 * these steps are listed in the worker README ("Failure windows"); each caller only maps the outcome to its
 * own answer (a BullMQ result, a lost lock, a world's file).
 */
import type { Logger } from "@farm/log";
import type { EpisodeOrigin } from "@farm/metrics";
import {
  EPISODE_JOB_VERSION,
  formatFailureReason,
  parseEpisodeJobResult,
  type ClaimOwner,
  type EpisodeClaim,
  type EpisodeJobResult,
  type EpisodeRef,
} from "@farm/queue";
import type { EpisodeRecord, StoredEpisode } from "@farm/trajectory";
import { staleKindOf, versionSpan, type EpisodeTrajectory } from "@farm/episode";
import { terminalSafe } from "@farm/terminal-text";
import { claimFile, settleAgainstClaim, type CommitDeps, type LocalFile, type StreamFacts } from "./commit-flow.ts";
import type { FaultHooks } from "./fault-hooks.ts";
import { scoreOutcome } from "./task-instance.ts";

type ResultFacts = Pick<EpisodeTrajectory, "outcome" | "cause" | "totalReward" | "startedAt" | "endedAt"> & { steps: unknown[] };

/** The job result an episode answers with (what the scheduler counts and the claim stores). */
export function resultOf(t: ResultFacts, file: string, worker: string, device: string): EpisodeJobResult {
  return {
    v: EPISODE_JOB_VERSION,
    outcome: t.outcome,
    cause: t.cause,
    steps: t.steps.length,
    reward: t.totalReward,
    durationMs: Math.max(0, t.endedAt.getTime() - t.startedAt.getTime()),
    trajectoryFile: file,
    worker,
    device,
  };
}

/** The result of a file already published (by an earlier attempt, or another host on shared storage). */
export const fromStored = (e: StoredEpisode, file: string): EpisodeJobResult => resultOf(e, file, e.worker, e.deviceSerial);

/** One finished episode to commit. */
export interface EpisodeCommit {
  ref: EpisodeRef;
  /** The finished trajectory with what the data set keeps (id, attempt, frame policy…). */
  record: EpisodeRecord & { frameEvery: number };
  /** Where the file goes: fixed by the job (or world), the same for every attempt. */
  finalFile: string;
  /** The job's lock (claims are refused once another attempt owns the job); undefined: no lock to check. */
  owner: ClaimOwner | undefined;
  taskId: string;
  /** The device that ran it, for the result. */
  device: string;
  origin: EpisodeOrigin;
  /** For messages (the BullMQ job id); undefined for remote worlds. */
  jobId: string | undefined;
  log: Logger;
  /** Crash points for the chaos bench; absent: none. */
  faults?: FaultHooks;
}

export type CommitOutcome =
  /** This attempt's claim is the commit (`file`: the claimed file, ours or an earlier attempt's at the same path). */
  | { kind: "committed"; result: EpisodeJobResult; file: string }
  /** Another attempt committed first: its claim stands (our file, if different, is quarantined). */
  | { kind: "taken"; claim: EpisodeClaim }
  /** The job's lock is not ours any more: nothing committed; the marker stays until the episode has a claim. */
  | { kind: "not-owner" };

/** Publishes the episode on this host, then claims it farm-wide (only while `owner` still holds the job's lock). */
export async function commitEpisode(d: CommitDeps, c: EpisodeCommit): Promise<CommitOutcome> {
  const { ref, record, finalFile } = c;
  const done = d.store.beginCommit(finalFile);
  try {
    await d.store.markPending({ ...ref, file: finalFile });
    const p = await d.store.publish(record, finalFile, record.frameEvery);
    c.faults?.at("crash-after-publish");
    if (!p.created && !p.existing) throw new Error(formatFailureReason("DEVICE_TROUBLE", `job ${c.jobId ?? record.episodeId}: ${p.path} exists but cannot be read back`));
    // A file already at the path (an earlier attempt on this storage) is the one to claim.
    const earlier = p.created ? undefined : p.existing;
    const result = earlier ? fromStored(earlier, p.path) : parseEpisodeJobResult(resultOf(record, p.path, d.workerName, c.device), c.jobId);
    const out = await claimPublished(d, earlier ? { ...c, record: earlier } : c, p, earlier ? earlier.attempt : record.attempt, result);
    if (out.kind === "committed" && p.created) countFinished(d, c, p.bytes);
    return out;
  } finally {
    done();
  }
}

/** What claimPublished needs of a commit: whose episode, under which lock, for which log line. */
export type ClaimContext = Pick<EpisodeCommit, "ref" | "owner" | "origin" | "log" | "faults"> & { record: { episodeId: string } & StreamFacts };

/**
 * Claims a file published on this host's storage (this attempt's, or one an earlier attempt left there) as the
 * episode's commit, and settles its pending marker: the claim step of every commit, of an episode just run
 * (commitEpisode) and of a file an earlier start of the job left unclaimed (the episode processor's adoption).
 */
export async function claimPublished(d: CommitDeps, c: ClaimContext, p: LocalFile & { created: boolean }, attempt: number, result: EpisodeJobResult): Promise<CommitOutcome> {
  const r = c.record;
  const facts: StreamFacts = {
    ...(r.success !== undefined ? { success: r.success } : {}),
    ...(r.groupIndex !== undefined ? { groupIndex: r.groupIndex, groupMember: r.groupMember ?? 0, groupSize: r.groupSize ?? 0 } : {}),
  };
  const claim = await claimFile(d, c.ref, p, attempt, result, c.owner, facts);
  if (claim.kind === "not-owner") return claim;
  if (claim.kind === "taken") {
    await settleTaken(d, c, p, claim.claim);
    return claim;
  }
  await d.store.clearPending(p.path);
  c.faults?.at("crash-after-claim");
  d.metrics.commit("committed");
  d.metrics.streamPublished();
  c.log.info({ event: "episode:committed", episodeId: c.record.episodeId, ...(r.groupIndex !== undefined ? { groupIndex: r.groupIndex, groupMember: r.groupMember } : {}), file: p.path, bytes: p.bytes, origin: c.origin, ...(p.created ? {} : { adopted: true }) }, "episode committed");
  return { kind: "committed", result, file: p.path };
}

/** Another attempt's claim stands: a different file of ours is a prevented duplicate (quarantined); the marker goes. */
async function settleTaken(d: CommitDeps, c: ClaimContext, p: { path: string; checksum: string }, claim: EpisodeClaim): Promise<void> {
  if (claim.checksum !== p.checksum) {
    await d.arbiter.count(c.ref.campaignId, "duplicatesPrevented");
    d.metrics.commit("duplicate_prevented");
    await settleAgainstClaim(d, c.ref, p.path, claim, p.checksum);
  }
  await d.store.clearPending(p.path);
  c.log.info(
    { event: "episode:already-committed", episodeId: c.record.episodeId, committedBy: claim.host, file: claim.location, origin: c.origin },
    "another attempt committed this episode first; its record stands",
  );
}

/** Episode metrics count committed episodes only, once: the attempt whose publish created the file. */
function countFinished(d: CommitDeps, c: EpisodeCommit, bytes: number): void {
  const r = c.record;
  d.metrics.trajectoryWritten({ bytes, files: 1 });
  d.metrics.episodeFinished({
    taskId: c.taskId,
    outcome: r.outcome,
    cause: r.cause,
    durationSec: (r.endedAt.getTime() - r.startedAt.getTime()) / 1000,
    steps: r.steps.length,
    reward: r.totalReward,
    origin: c.origin,
  });
  const score = scoreOutcome(r);
  if (score) d.metrics.episodeScored(c.taskId, score.result, score.seconds);
  countVersions(d, c);
  if (r.stale !== undefined) {
    const onStale = r.cause === "stale_policy" ? "end" : "mark";
    d.metrics.episodeStale(staleKindOf(r.stale), onStale);
    c.log.info(
      { event: "episode:stale", campaignId: c.ref.campaignId, episodeIndex: c.ref.episodeIndex, kind: staleKindOf(r.stale), onStale, reason: terminalSafe(r.stale), firstPolicyVersion: terminalSafe(r.firstPolicyVersion ?? ""), lastPolicyVersion: terminalSafe(r.lastPolicyVersion ?? "") },
      "episode too stale for a learner (its policy versions span or lag more than the campaign's max staleness)",
    );
  }
}

/** The versions one committed episode's steps spanned (whole-number versions), when its policy reported any. */
function countVersions(d: CommitDeps, c: EpisodeCommit): void {
  const span = versionSpan(c.record.steps.map((s) => s.policyVersion));
  if (span !== undefined) d.metrics.episodeVersionSpan(span);
}
