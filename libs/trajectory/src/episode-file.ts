/**
 * writeEpisodeFile: one episode in one container file under a name the caller chooses, published with
 * no-replace semantics so that concurrent or repeated attempts of one episode leave exactly one file:
 *   encode → hidden temp `.<file>.<hex>.tmp` in the target folder → fsync → link(temp, final) → unlink
 *   temp → fsync folder.
 * `link` fails with EEXIST when the name is taken: the first attempt to publish wins and the others get
 * `created: false` plus the winner's record. Where hard links are not supported (EPERM, ENOTSUP, ENOSYS:
 * some FUSE, SMB and FAT mounts) it falls back to "rename unless the name exists", which is not atomic:
 * two attempts racing inside that window both publish, the later replacing the earlier (still one
 * complete file at the name). Readers never see a partial file either way.
 */
import { randomBytes } from "node:crypto";
import { link, rename, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { ContainerFileWriter, fsyncDir } from "./container-writer.ts";
import { dateDir, readEpisodeFile } from "./episode-files.ts";
import { episodeFileName, episodeTempFileName, inFolder, isPublishableFileName } from "./partition.ts";
import { episodeFileHeader, RecordEncoder } from "./record-encoding.ts";
import { CODEC_NAMES, TrajectoryError, type CodecName, type EpisodeRecord, type StoredEpisode } from "./types.ts";
import { errnoCode } from "@farm/errors";

/** Either the full path, or the partition parts (the task comes from the record). */
export type EpisodeFileTarget =
  | { path: string }
  | {
      outDir: string;
      /** A time (its UTC day) or `yyyy-mm-dd`; deliberately not `record.startedAt`, which differs per attempt. */
      partitionDate: Date | string;
      /** Default `<escaped episode id>.avro` (see episodeFilePath). */
      fileName?: string;
    };

export type WriteEpisodeFileOptions = EpisodeFileTarget & {
  /** Default "deflate", like TrajectoryWriter. */
  codec?: CodecName;
  /** Default true: never replace an existing file (first attempt wins). false: atomic rename over it. */
  noReplace?: boolean;
  /** For a record without its own `frameEvery`, as in TrajectoryWriter. Default 0. */
  frameEvery?: number;
  /** `farm.writer.id` header metadata. Default `record.worker`. */
  writerId?: string;
};

export interface WrittenEpisodeFile {
  path: string;
  /** Size of the file now at `path` (the existing one when not created). */
  bytes: number;
  /** false: the name was taken (noReplace); this record was not stored. */
  created: boolean;
  /** When not created: the record already at `path`, read back. */
  existing?: StoredEpisode;
  /** When created: `sha256:<hex>` of the file's bytes (as written; no read back). */
  checksum?: string;
}

/** Hard links are unavailable on this filesystem (as opposed to the name being taken or an I/O error). */
const LINK_UNSUPPORTED = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

export async function writeEpisodeFile(record: EpisodeRecord, options: WriteEpisodeFileOptions): Promise<WrittenEpisodeFile> {
  const codec = options.codec ?? "deflate";
  const frameEvery = options.frameEvery ?? 0;
  const noReplace = options.noReplace ?? true;
  const bad = (why: string) => new TrajectoryError("invalid_options", `writeEpisodeFile: ${why}`);
  if (!CODEC_NAMES.includes(codec)) throw bad(`codec must be one of ${CODEC_NAMES.join(", ")}`);
  if (!Number.isSafeInteger(frameEvery) || frameEvery < 0) throw bad("frameEvery must be 0 (never) or a positive integer");
  const finalPath = targetPath(record, options);
  if (!isPublishableFileName(path.basename(finalPath))) {
    throw bad(`file name ${JSON.stringify(path.basename(finalPath))} must end in .avro and not be hidden or temporary (readers skip those)`);
  }
  // Encode first: an invalid record fails here without touching any file.
  const encoded = new RecordEncoder().encode(record, frameEvery);

  const dir = path.dirname(finalPath);
  const tmpPath = path.join(dir, episodeTempFileName(path.basename(finalPath), randomBytes(8).toString("hex")));
  let bytes: number;
  let created: boolean;
  let checksum: string | undefined;
  try {
    const fileOptions = { tmpPath, finalPath, ...episodeFileHeader(codec, options.writerId ?? record.worker, frameEvery), blockBytes: encoded.length + 64, checksum: true };
    const file = await inFolder(dir, () => ContainerFileWriter.create(fileOptions));
    try {
      await file.append(encoded);
    } catch (err) {
      await file.abandon();
      throw err;
    }
    bytes = await file.seal(); // the temp file is complete and on disk before any name points at it
    checksum = file.sha256();
    created = noReplace ? await publishIfAbsent(tmpPath, finalPath) : (await rename(tmpPath, finalPath), true);
  } finally {
    // After a link the temp is a second name of the published file; after a rename or a failure it is gone
    // or junk. Should this unlink fail, the hidden leftover is harmless (removeStaleEpisodeTempFiles).
    await unlink(tmpPath).catch(() => undefined);
  }
  await fsyncDir(dir);
  if (created) return { path: finalPath, bytes, created, ...(checksum ? { checksum } : {}) };
  const existing = await readEpisodeFile(finalPath);
  return { path: finalPath, bytes: (await stat(finalPath)).size, created, ...(existing ? { existing } : {}) };
}

function targetPath(record: EpisodeRecord, options: EpisodeFileTarget): string {
  if ("path" in options) {
    if (!options.path) throw new TrajectoryError("invalid_options", "writeEpisodeFile: path is empty");
    return options.path;
  }
  if (!options.outDir) throw new TrajectoryError("invalid_options", "writeEpisodeFile: outDir is required");
  return path.join(dateDir(options.outDir, record.taskId, options.partitionDate), options.fileName ?? episodeFileName(record.episodeId));
}

/** Publishes the temp file at `finalPath` unless a file is there already; true when published. */
async function publishIfAbsent(tmpPath: string, finalPath: string): Promise<boolean> {
  try {
    await link(tmpPath, finalPath);
    return true;
  } catch (err) {
    if (errnoCode(err) === "EEXIST") return false;
    if (!LINK_UNSUPPORTED.has(errnoCode(err) ?? "")) throw err;
  }
  // No hard links here: check, then rename (see the module comment for the race this leaves).
  try {
    await stat(finalPath);
    return false;
  } catch (err) {
    if (errnoCode(err) !== "ENOENT") throw err;
  }
  await rename(tmpPath, finalPath);
  return true;
}
