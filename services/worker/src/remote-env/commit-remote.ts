/**
 * A remote world's finished episode, recorded like a campaign's: published on this host, claimed
 * farm-wide (the commit, exactly once), counted in the metrics with origin="remote". The world's name is
 * the episode's campaign id, the world's episode counter its index.
 */
import { EPISODE_JOB_VERSION, type EpisodeJobResult, type EpisodeRef } from "@farm/queue";
import type { EpisodeTrajectory } from "@farm/episode";
import type { LoadedTask } from "@farm/task";
import { episodeIdOf } from "@farm/trajectory";
import { claimFile, settleAgainstClaim, type CommitDeps } from "../commit-flow.ts";

export interface RemoteEpisodeMeta {
  ref: EpisodeRef;
  task: LoadedTask;
  /** Fixes the date partition of the world's files. */
  createdAtMs: number;
  frameEvery: number;
  serial: string;
}

/** Returns the committed file's path (the claim's location when an earlier commit of the episode stands). */
export async function commitRemoteEpisode(d: CommitDeps, traj: EpisodeTrajectory, m: RemoteEpisodeMeta): Promise<string> {
  const episodeId = episodeIdOf(m.ref.campaignId, m.ref.episodeIndex);
  const finalFile = d.store.finalPath(m.task.task.id, m.createdAtMs, episodeId);
  const record = { ...traj, episodeId, campaignId: m.ref.campaignId, episodeIndex: m.ref.episodeIndex, attempt: 1, worker: d.workerName, taskDialect: m.task.dialect, frameEvery: m.frameEvery };
  const done = d.store.beginCommit(finalFile);
  try {
    await d.store.markPending({ ...m.ref, file: finalFile });
    const p = await d.store.publish(record, finalFile, m.frameEvery);
    const result: EpisodeJobResult = {
      v: EPISODE_JOB_VERSION,
      outcome: traj.outcome,
      cause: traj.cause,
      steps: traj.steps.length,
      reward: traj.totalReward,
      durationMs: Math.max(0, traj.endedAt.getTime() - traj.startedAt.getTime()),
      trajectoryFile: p.path,
      worker: d.workerName,
      device: m.serial,
    };
    const c = await claimFile(d, m.ref, p, 1, result, undefined);
    if (c.kind === "taken") {
      await settleAgainstClaim(d, m.ref, p.path, c.claim, p.checksum);
      await d.store.clearPending(finalFile);
      return c.claim.location;
    }
    await d.store.clearPending(finalFile);
    d.metrics.commit("committed");
    if (p.created) {
      d.metrics.trajectoryWritten({ bytes: p.bytes, files: 1 });
      const durationSec = (traj.endedAt.getTime() - traj.startedAt.getTime()) / 1000;
      d.metrics.episodeFinished({ taskId: m.task.task.id, outcome: traj.outcome, cause: traj.cause, durationSec, steps: traj.steps.length, reward: traj.totalReward, origin: "remote" });
    }
    d.logger.info({ event: "episode:committed", episodeId, file: p.path, bytes: p.bytes, origin: "remote" }, "remote episode committed");
    return p.path;
  } finally {
    done();
  }
}
