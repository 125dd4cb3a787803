/**
 * A remote world's finished episode, recorded like a campaign's: published on this host, claimed
 * farm-wide (the commit, exactly once), counted in the metrics with origin="remote". The world's name is
 * the episode's campaign id, the world's episode counter its index.
 */
import { FarmError } from "@farm/errors";
import type { EpisodeRef } from "@farm/queue";
import type { EpisodeTrajectory } from "@farm/episode";
import type { LoadedTask } from "@farm/task";
import { episodeIdOf } from "@farm/trajectory";
import type { CommitDeps } from "../commit-flow.ts";
import { commitEpisode } from "../commit-episode.ts";

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
  // No job lock to hold (owner undefined), so the claim cannot come back not-owner.
  const out = await commitEpisode(d, { ref: m.ref, record, finalFile, owner: undefined, taskId: m.task.task.id, device: m.serial, origin: "remote", jobId: undefined, log: d.logger });
  if (out.kind === "not-owner") throw new FarmError("claim_not_owner", `remote episode ${episodeId}: the claim was refused as not the owner, though none was given`);
  return out.kind === "taken" ? out.claim.location : out.file;
}
