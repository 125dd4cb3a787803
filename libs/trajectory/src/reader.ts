/** Reading trajectory files and folders back into episode records. Temporary and hidden files are never read. */
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import type { Schema } from "avsc";
import { openContainer, type ContainerInfo } from "./container-reader.ts";
import { episodeFromAvro, type AvroEpisode } from "./episode-codec.ts";
import { cachedAvroTypeFor } from "./logical-types.ts";
import { isInvisibleName } from "./partition.ts";
import { episodeSchema, META_SCHEMA_VERSION } from "./schema.ts";
import { resolveReadLimits } from "./read-limits.ts";
import { TrajectoryError, type StoredEpisode } from "./types.ts";
import { coerceError } from "@farm/errors";

export interface ReadOptions {
  /**
   * Schema to resolve every file into (Avro schema resolution). Default: this version's `episodeSchema`,
   * so older files get defaults for fields added since and newer files lose only fields we do not know.
   */
  readerSchema?: Schema;
  /** Memory budget per file (default 256 MiB); see read-limits.ts. */
  memoryBudgetBytes?: number;
}

export interface TrajectoryFileListing {
  files: string[];
  /** Temporary or hidden files that were skipped. */
  skipped: string[];
}

/** Expands files and folders (recursively) into the visible `.avro` files, sorted. */
export async function listTrajectoryFiles(pathsOrDirs: readonly string[]): Promise<TrajectoryFileListing> {
  const files: string[] = [];
  const skipped: string[] = [];
  const walk = async (p: string, explicit: boolean): Promise<void> => {
    const base = path.basename(p);
    const st = await stat(p);
    if (st.isDirectory()) {
      const names = (await readdir(p)).sort();
      for (const name of names) {
        if (isInvisibleName(name)) skipped.push(path.join(p, name));
        else await walk(path.join(p, name), false);
      }
    } else if (isInvisibleName(base)) skipped.push(p);
    else if (explicit || base.endsWith(".avro")) files.push(p);
  };
  for (const p of pathsOrDirs) await walk(p, true);
  return { files: [...new Set(files)], skipped };
}

export interface OpenedTrajectoryFile {
  file: string;
  info: ContainerInfo;
  /** From the file metadata (`farm.schema.version`); NaN when absent (not written by the farm). */
  schemaVersion: number;
  episodes: AsyncGenerator<StoredEpisode>;
}

export async function openTrajectoryFile(file: string, options: ReadOptions = {}): Promise<OpenedTrajectoryFile> {
  const limits = resolveReadLimits(options.memoryBudgetBytes === undefined ? {} : { memoryBudgetBytes: options.memoryBudgetBytes });
  const { info, records } = await openContainer(file, cachedAvroTypeFor(options.readerSchema ?? episodeSchema), limits);
  async function* episodes(): AsyncGenerator<StoredEpisode> {
    let index = 0;
    for await (const r of records) {
      let episode: StoredEpisode;
      try {
        episode = episodeFromAvro(r as AvroEpisode, file, limits);
      } catch (err) {
        const id = (r as { episodeId?: unknown }).episodeId;
        throw new TrajectoryError("corrupt_file", `${file}: record ${index}${typeof id === "string" ? ` (episode ${JSON.stringify(id.slice(0, 200))})` : ""}: ${coerceError(err).message}`, false, { cause: err });
      }
      index++;
      yield episode;
    }
  }
  return { file, info, schemaVersion: Number(info.meta[META_SCHEMA_VERSION] ?? NaN), episodes: episodes() };
}

/** Every episode in the given files and folders, file by file (temporary files skipped). */
export async function* readTrajectories(pathsOrDirs: string | readonly string[], options: ReadOptions = {}): AsyncGenerator<StoredEpisode> {
  const { files } = await listTrajectoryFiles(typeof pathsOrDirs === "string" ? [pathsOrDirs] : pathsOrDirs);
  for (const file of files) {
    const opened = await openTrajectoryFile(file, options);
    yield* opened.episodes;
  }
}
