/**
 * This host's storage of episode files: one Avro file per episode at a path that depends only on the job,
 *   <out>/task=<id>/date=<day the job was enqueued, UTC>/<campaignId>-<index>.avro
 * written by @farm/trajectory's writeEpisodeFile (hidden temp name, fsync, hard link that fails if the
 * name exists: within one folder the first attempt to publish wins).
 *
 * A published file is not yet the commit: the farm-wide claim is (see commit-flow.ts). Until the claim
 * names it, a published file has a pending marker `<out>/.pending/<file name>.json` (written before
 * publishing, removed once settled; pending-markers.ts), so a crash between publish and claim leaves something to resolve.
 * A file the claim does not name is moved to `<out>/.quarantine/…` (hidden: readers skip it).
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, rename, stat } from "node:fs/promises";
import path from "node:path";
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
import { errnoCode } from "@farm/errors";
import { PendingMarkers, type PendingMarker } from "./pending-markers.ts";

export type { PendingMarker };

export interface PublishResult {
  path: string;
  bytes: number;
  checksum: string;
  /** false: a file was at the path already (an earlier attempt on this storage); `existing` is its record. */
  created: boolean;
  existing?: StoredEpisode;
}

const QUARANTINE_DIR = ".quarantine";

export async function fileChecksum(file: string): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return `sha256:${h.digest("hex")}`;
}

export class EpisodeStore {
  private readonly markers: PendingMarkers;

  constructor(
    readonly outDir: string,
    private readonly codec: CodecName,
  ) {
    this.markers = new PendingMarkers(outDir);
  }

  /** The one final path of an episode; `enqueuedAtMs` is the job's creation time (the same for every attempt). */
  finalPath(taskId: string, enqueuedAtMs: number, episodeId: string): string {
    return episodeFilePath({ outDir: this.outDir, taskId, date: new Date(enqueuedAtMs), episodeId });
  }

  /** The episode's file on this storage in any date partition of its task (a campaign re-added another day), or undefined. */
  findLocal(taskId: string, episodeId: string): Promise<string | undefined> {
    return findEpisodeFile(this.outDir, taskId, episodeId);
  }

  readRecord(file: string): Promise<StoredEpisode | undefined> {
    return readEpisodeFile(file);
  }

  checksum(file: string): Promise<string> {
    return fileChecksum(file);
  }

  /** Writes `record` and publishes it at `finalFile` unless a file is there already (then that one is returned). */
  async publish(record: EpisodeRecord, finalFile: string, frameEvery: number): Promise<PublishResult> {
    const w = await writeEpisodeFile(record, { path: finalFile, codec: this.codec, frameEvery, noReplace: true });
    // A file this call created: the checksum of the bytes it wrote; another's: read from the disk.
    const checksum = (w.created ? w.checksum : undefined) ?? (await fileChecksum(w.path));
    return { path: w.path, bytes: w.bytes, checksum, created: w.created, ...(w.existing ? { existing: w.existing } : {}) };
  }

  /** Remembers, before publishing, that `file` may appear and must be settled against the claim. */
  markPending(m: Omit<PendingMarker, "atMs">): Promise<void> {
    return this.markers.mark(m);
  }

  clearPending(file: string): Promise<void> {
    return this.markers.clear(file);
  }

  /** Marks `file` as being committed by this process until `done()` (see pendingMarkers). */
  beginCommit(file: string): () => void {
    return this.markers.beginCommit(file);
  }

  /** Markers left by attempts that are not running in this process any more (crashed, or lost their lock). */
  pendingMarkers(): Promise<PendingMarker[]> {
    return this.markers.list();
  }

  /**
   * Moves `file` out of readers' sight into `<out>/.quarantine/` (same relative path, plus the checksum
   * prefix when that name is taken). Returns false when the file is gone already (someone else moved it).
   */
  async quarantine(file: string, checksum: string): Promise<boolean> {
    const rel = path.relative(this.outDir, file);
    const inside = !rel.startsWith("..") && !path.isAbsolute(rel);
    let target = path.join(this.outDir, QUARANTINE_DIR, inside ? rel : path.basename(file));
    await mkdir(path.dirname(target), { recursive: true });
    if (await exists(target)) target = `${target}.${checksum.replace(/^sha256:/, "").slice(0, 16)}`;
    try {
      await rename(file, target);
      return true;
    } catch (e) {
      if (errnoCode(e) === "ENOENT") return false;
      throw e;
    }
  }

  /** Before the process ends: removes what this store keeps for reuse (see pending-markers.ts). */
  close(): Promise<void> {
    return this.markers.close();
  }

  /** Removes hidden temporaries of commits abandoned by crashed processes. Returns how many were removed. */
  async sweepAbandonedTempFiles(olderThanMs: number): Promise<number> {
    return (await removeStaleEpisodeTempFiles(this.outDir, olderThanMs)) + (await this.markers.sweepBlanks(olderThanMs));
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}
