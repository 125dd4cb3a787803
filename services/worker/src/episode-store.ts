/**
 * Exactly-once commit of an episode: one Avro file per episode at a path that depends only on the job,
 *   <out>/task=<id>/date=<day the job was enqueued, UTC>/<campaignId>-<index>.avro
 * so every attempt of one episode (a retry, a stalled job handed to another worker) aims at the same
 * name. The record is written by TrajectoryWriter into a private staging folder (temp name → fsync →
 * rename), then hard-linked to the final name, which fails if it exists: the first attempt to commit
 * wins and the others read its record instead. At most one file per episode id exists by construction.
 *
 * TrajectoryWriter names files `<writerId>-<seq>.avro` with the next free sequence in the partition,
 * which is not deterministic across attempts; hence the staging step (see services/worker/README.md).
 */
import { randomBytes } from "node:crypto";
import { link, mkdir, open, readdir, rename, rm, rmdir, stat } from "node:fs/promises";
import path from "node:path";
import { openTrajectoryFile, partitionDir, TrajectoryWriter, type CodecName, type EpisodeRecord, type StoredEpisode } from "@farm/trajectory";

export const STAGING_DIR = ".staging";

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
    return path.join(partitionDir(this.outDir, taskId, new Date(enqueuedAtMs)), `${episodeId}.avro`);
  }

  /**
   * The committed file of an episode in any date partition of its task, or undefined. The date comes from
   * the job, so a campaign re-added on a later day (after its finished jobs were removed from Redis) would
   * otherwise run its episodes again under a new date.
   */
  async findCommitted(taskId: string, episodeId: string): Promise<string | undefined> {
    const taskDir = path.dirname(partitionDir(this.outDir, taskId, new Date(0)));
    let dates: string[];
    try {
      dates = (await readdir(taskDir)).filter((d) => d.startsWith("date="));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw e;
    }
    for (const d of dates.sort().reverse()) {
      const file = path.join(taskDir, d, `${episodeId}.avro`);
      if (await exists(file)) return file;
    }
    return undefined;
  }

  /** Removes staging folders abandoned by crashed processes (a commit holds one for milliseconds). */
  async sweepStaging(olderThanMs: number): Promise<number> {
    const root = path.join(this.outDir, STAGING_DIR);
    let names: string[];
    try {
      names = await readdir(root);
    } catch {
      return 0;
    }
    let removed = 0;
    for (const n of names) {
      const p = path.join(root, n);
      try {
        if (Date.now() - (await stat(p)).mtimeMs < olderThanMs) continue;
        await rm(p, { recursive: true, force: true });
        removed++;
      } catch {
        // gone meanwhile
      }
    }
    await rmdir(root).catch(() => undefined);
    return removed;
  }

  /** The record committed at `file`, or undefined when there is none yet. */
  async readCommitted(file: string): Promise<StoredEpisode | undefined> {
    try {
      await stat(file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw e;
    }
    const opened = await openTrajectoryFile(file);
    let first: StoredEpisode | undefined;
    for await (const ep of opened.episodes) first ??= ep;
    return first;
  }

  /** Writes `record` and publishes it at `finalFile` unless some attempt already did. */
  async commit(record: EpisodeRecord, finalFile: string, frameEvery: number): Promise<CommitResult> {
    const staging = path.join(this.outDir, STAGING_DIR, `${record.episodeId}.${process.pid}.${randomBytes(4).toString("hex")}`);
    let staged: { path: string; bytes: number } | undefined;
    try {
      const open = () =>
        TrajectoryWriter.open({
          outDir: staging,
          writerId: "episode",
          codec: this.codec,
          maxEpisodesPerFile: 1,
          frameEvery,
          onFileClosed: (f) => (staged = { path: f.path, bytes: f.bytes }),
        });
      // Another commit may remove the empty staging root between our mkdir's steps: try once more.
      const writer = await open().catch((e: unknown) => ((e as NodeJS.ErrnoException).code === "ENOENT" ? open() : Promise.reject(e)));
      try {
        await writer.append(record);
      } finally {
        await writer.close();
      }
      if (!staged) throw new Error(`trajectory writer closed no file for ${record.episodeId}`);
      const dir = path.dirname(finalFile);
      await mkdir(dir, { recursive: true });
      let alreadyCommitted = false;
      try {
        await link(staged.path, finalFile);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "EEXIST") alreadyCommitted = true;
        // Filesystems without hard links: an atomic rename (last writer wins; still one file per episode).
        else if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "EXDEV") await rename(staged.path, finalFile);
        else throw e;
      }
      await fsyncDir(dir);
      if (alreadyCommitted) {
        const existing = await this.readCommitted(finalFile);
        return { path: finalFile, bytes: (await stat(finalFile)).size, alreadyCommitted, ...(existing ? { existing } : {}) };
      }
      return { path: finalFile, bytes: staged.bytes, alreadyCommitted };
    } finally {
      await rm(staging, { recursive: true, force: true });
      // Leave no hidden folder behind when idle (fails harmlessly while other commits use it).
      await rmdir(path.dirname(staging)).catch(() => undefined);
    }
  }

  /** Removes the staging folder when no attempt uses it any more (other processes may share the output folder). */
  async close(): Promise<void> {
    await rmdir(path.join(this.outDir, STAGING_DIR)).catch(() => undefined);
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw e;
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const h = await open(dir, "r");
  try {
    await h.sync();
  } catch {
    // some filesystems refuse fsync on folders; the rename/link itself is still atomic
  } finally {
    await h.close();
  }
}
