/**
 * This host's storage of episode files: one Avro file per episode at a path that depends only on the job,
 *   <out>/task=<id>/date=<day the job was enqueued, UTC>/<campaignId>-<index>.avro
 * written by @farm/trajectory's writeEpisodeFile (hidden temp name, fsync, hard link that fails if the
 * name exists: within one folder the first attempt to publish wins).
 *
 * A published file is not yet the commit: the farm-wide claim is (see commit-flow.ts). Until the claim
 * names it, a published file has a pending marker `<out>/.pending/<file name>.json` (written before
 * publishing, removed once settled), so a crash between publish and claim leaves something to resolve.
 * A file the claim does not name is moved to `<out>/.quarantine/…` (hidden: readers skip it).
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, readFile, readdir, rename, rm, stat, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  episodeFilePath,
  findEpisodeFile,
  readEpisodeFile,
  inFolder,
  removeStaleEpisodeTempFiles,
  writeEpisodeFile,
  type CodecName,
  type EpisodeRecord,
  type StoredEpisode,
} from "@farm/trajectory";

export interface PublishResult {
  path: string;
  bytes: number;
  checksum: string;
  /** false: a file was at the path already (an earlier attempt on this storage); `existing` is its record. */
  created: boolean;
  existing?: StoredEpisode;
}

/** What a pending marker remembers: which episode the file at `file` belongs to. */
export interface PendingMarker {
  campaignId: string;
  episodeIndex: number;
  file: string;
  atMs: number;
}

const PENDING_DIR = ".pending";
const QUARANTINE_DIR = ".quarantine";

export async function fileChecksum(file: string): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return `sha256:${h.digest("hex")}`;
}

function errno(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

export class EpisodeStore {
  /** Files an attempt in this process is committing right now: the pending resolver leaves them alone. */
  private readonly committing = new Set<string>();

  constructor(
    readonly outDir: string,
    private readonly codec: CodecName,
  ) {}

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

  private markerPath(file: string): string {
    return path.join(this.outDir, PENDING_DIR, `${path.basename(file)}.json`);
  }

  /** Remembers, before publishing, that `file` may appear and must be settled against the claim. */
  async markPending(m: Omit<PendingMarker, "atMs">): Promise<void> {
    const p = this.markerPath(m.file);
    const body = JSON.stringify({ ...m, atMs: Date.now() });
    await inFolder(path.dirname(p), () => writeFile(p, body));
  }

  async clearPending(file: string): Promise<void> {
    await unlink(this.markerPath(file)).catch((e: unknown) => {
      if (errno(e) !== "ENOENT") throw e;
    });
  }

  /** Marks `file` as being committed by this process until `done()` (see pendingMarkers). */
  beginCommit(file: string): () => void {
    this.committing.add(file);
    return () => this.committing.delete(file);
  }

  /** Markers left by attempts that are not running in this process any more (crashed, or lost their lock). */
  async pendingMarkers(): Promise<PendingMarker[]> {
    const dir = path.join(this.outDir, PENDING_DIR);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (e) {
      if (errno(e) === "ENOENT") return [];
      throw e;
    }
    const out: PendingMarker[] = [];
    for (const n of names.filter((x) => x.endsWith(".json"))) {
      try {
        const m = JSON.parse(await readFile(path.join(dir, n), "utf8")) as PendingMarker;
        if (typeof m.file === "string" && typeof m.campaignId === "string" && Number.isSafeInteger(m.episodeIndex)) {
          if (!this.committing.has(m.file)) out.push(m);
        }
        else await rm(path.join(dir, n), { force: true });
      } catch (e) {
        if (errno(e) !== "ENOENT") await rm(path.join(dir, n), { force: true }); // torn write: the publish never happened
      }
    }
    return out;
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
      if (errno(e) === "ENOENT") return false;
      throw e;
    }
  }

  /** Removes hidden temporaries of commits abandoned by crashed processes. Returns how many were removed. */
  sweepAbandonedTempFiles(olderThanMs: number): Promise<number> {
    return removeStaleEpisodeTempFiles(this.outDir, olderThanMs);
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
