/**
 * Exactly once across hosts: the file is published on this host's storage, then the episode is claimed
 * farm-wide (CommitArbiter, in Redis); the claim is the commit. This module holds the steps that touch
 * both: claim a published file, settle a local file against a claim (keep it, or quarantine a loser),
 * and resolve the pending markers a crash or a lost lock left behind.
 *
 * The one rule that keeps quarantining safe: a file is moved only when a claim for its episode exists
 * and names another checksum. Claims never change once set, so such a file can never become the commit;
 * an unclaimed file is left alone (some attempt may still claim it).
 */
import type { Logger } from "@farm/log";
import type { FarmMetrics } from "@farm/metrics";
import type { ClaimOutcome, ClaimOwner, CommitArbiter, EpisodeClaim, EpisodeJobResult, EpisodeRef, EpisodeStreamMessage } from "@farm/queue";
import type { EpisodeStore } from "./episode-store.ts";

const ABANDONED_MARKER_MS = 10 * 60_000;

export interface CommitDeps {
  store: EpisodeStore;
  arbiter: CommitArbiter;
  metrics: FarmMetrics;
  logger: Logger;
  workerName: string;
}

export interface LocalFile {
  path: string;
  checksum: string;
  bytes: number;
}

/** What the stream entry of a commit adds to the job result: the task's score and the episode's group. */
export interface StreamFacts {
  success?: number;
  groupIndex?: number;
  groupMember?: number;
  groupSize?: number;
}

/**
 * Claims `file` as the commit of `ref` with `result`, while `owner` still holds the job's lock; the same atomic step
 * adds the episode to its campaign's stream (@farm/queue episode-stream.ts).
 */
export function claimFile(d: CommitDeps, ref: EpisodeRef, file: LocalFile, attempt: number, result: EpisodeJobResult, owner: ClaimOwner | undefined, facts: StreamFacts = {}): Promise<ClaimOutcome> {
  const atMs = Date.now();
  const claim: EpisodeClaim = { host: d.workerName, location: file.path, checksum: file.checksum, bytes: file.bytes, attempt, atMs, result };
  const message: EpisodeStreamMessage = {
    episodeId: `${ref.campaignId}-${ref.episodeIndex}`,
    campaignId: ref.campaignId,
    episodeIndex: ref.episodeIndex,
    file: file.path,
    host: d.workerName,
    outcome: result.outcome,
    cause: result.cause,
    steps: result.steps,
    reward: result.reward,
    committedAtMs: atMs,
    ...(facts.success !== undefined ? { success: facts.success } : {}),
    ...(facts.groupIndex !== undefined && facts.groupMember !== undefined && facts.groupSize ? { groupIndex: facts.groupIndex, groupMember: facts.groupMember, groupSize: facts.groupSize } : {}),
  };
  return d.arbiter.claim(ref, claim, owner, message);
}

/**
 * `file` against the claim of its episode: the named file stays; any other goes to quarantine (and is
 * counted). Returns true when the file was quarantined.
 */
export async function settleAgainstClaim(d: CommitDeps, ref: EpisodeRef, file: string, claim: EpisodeClaim, knownChecksum?: string): Promise<boolean> {
  let checksum = knownChecksum;
  try {
    checksum ??= await d.store.checksum(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw e;
  }
  if (checksum === claim.checksum) return false;
  if (!(await d.store.quarantine(file, checksum))) return false;
  await d.arbiter.count(ref.campaignId, "quarantined");
  d.metrics.fileQuarantined();
  d.logger.warn(
    { event: "episode:quarantined", episodeId: `${ref.campaignId}-${ref.episodeIndex}`, file, committedBy: claim.host, committedAt: claim.location },
    "episode file is not the committed one; moved to quarantine",
  );
  return true;
}

/**
 * Settles every pending marker whose episode has a claim now (keep or quarantine the file); markers of
 * files that never appeared are dropped; unclaimed ones wait. Returns how many files were quarantined.
 */
export async function resolvePending(d: CommitDeps): Promise<{ settled: number; quarantined: number; waiting: number }> {
  let settled = 0;
  let quarantined = 0;
  let waiting = 0;
  for (const m of await d.store.pendingMarkers()) {
    const ref = { campaignId: m.campaignId, episodeIndex: m.episodeIndex };
    const claim = await d.arbiter.lookup(ref);
    if (!claim) {
      let present = true;
      try {
        await d.store.checksum(m.file);
      } catch {
        present = false;
      }
      // Unclaimed: some attempt may still claim it. A marker whose file never appeared is dropped once it
      // is old enough that no attempt (on any host sharing this folder) can still be writing it.
      if (present || Date.now() - m.atMs < ABANDONED_MARKER_MS) {
        waiting++;
        continue;
      }
      await d.store.clearPending(m.file);
      settled++;
      continue;
    }
    if (await settleAgainstClaim(d, ref, m.file, claim)) quarantined++;
    await d.store.clearPending(m.file);
    settled++;
  }
  return { settled, quarantined, waiting };
}
