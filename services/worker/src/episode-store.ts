/**
 * Exactly-once commit of an episode: one Avro file per episode at a path that depends only on the job,
 *   <out>/task=<id>/date=<day the job was enqueued, UTC>/<campaignId>-<index>.avro
 * so every attempt of one episode (a retry, a stalled job handed to another worker) aims at the same
 * name. @farm/trajectory's writeEpisodeFile writes it under a hidden temp name, fsyncs and hard-links it
 * to that name, which fails if it exists: the first attempt to commit wins and the others get its record.
 * At most one file per episode id exists by construction (see services/worker/README.md, "Exactly once").
 */
import {
  episodeFilePath,
  findEpisodeFile,
  readEpisodeFile,
  removeStaleEpisodeTempFiles,
  writeEpisodeFile,
  type CodecName,
  type EpisodeRecord,
  type StoredEpisode,
} from "@farm/trajectory";

export interface CommitResult {
  path: string;
  bytes: number;
  /** Another attempt committed this episode first; `existing` is its record. */
  alreadyCommitted: boolean;
  existing?: StoredEpisode;
}

export class EpisodeStore {
  constructor(
    readonly outDir: string,
    private readonly codec: CodecName,
  ) {}

  /** The one final path of an episode; `enqueuedAtMs` is the job's creation time (the same for every attempt). */
  finalPath(taskId: string, enqueuedAtMs: number, episodeId: string): string {
    return episodeFilePath({ outDir: this.outDir, taskId, date: new Date(enqueuedAtMs), episodeId });
  }

  /**
   * The committed file of an episode in any date partition of its task, or undefined. The date comes from
   * the job, so a campaign re-added on a later day (after its finished jobs were removed from Redis) would
   * otherwise run its episodes again under a new date.
   */
  findCommitted(taskId: string, episodeId: string): Promise<string | undefined> {
    return findEpisodeFile(this.outDir, taskId, episodeId);
  }

  /** The record committed at `file`, or undefined when there is none yet. */
  readCommitted(file: string): Promise<StoredEpisode | undefined> {
    return readEpisodeFile(file);
  }

  /** Writes `record` and publishes it at `finalFile` unless some attempt already did. */
  async commit(record: EpisodeRecord, finalFile: string, frameEvery: number): Promise<CommitResult> {
    const w = await writeEpisodeFile(record, { path: finalFile, codec: this.codec, frameEvery, noReplace: true });
    return { path: w.path, bytes: w.bytes, alreadyCommitted: !w.created, ...(w.existing ? { existing: w.existing } : {}) };
  }

  /**
   * Removes hidden temporary files of commits abandoned by crashed processes (a commit holds one for
   * milliseconds; readers skip them anyway, this only frees the space). Returns how many were removed.
   */
  sweepAbandonedTempFiles(olderThanMs: number): Promise<number> {
    return removeStaleEpisodeTempFiles(this.outDir, olderThanMs);
  }
}
