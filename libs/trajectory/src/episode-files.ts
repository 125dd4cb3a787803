/**
 * Where single-episode files live and how to find, read and tidy them:
 *   <out>/task=<escaped task id>/date=<yyyy-mm-dd>/<escaped episode id>.avro
 * The name depends only on what the caller passes (not on a writer's sequence or the record's start
 * time), so every attempt of one episode aims at the same file. Written by writeEpisodeFile.
 */
import { stat, unlink } from "node:fs/promises";
import path from "node:path";
import { episodeFileName, isEpisodeTempFileName, partitionDay, readdirOrEmpty, taskDir } from "./partition.ts";
import { openTrajectoryFile } from "./reader.ts";
import { TrajectoryError, type StoredEpisode } from "./types.ts";
import { errnoCode } from "@farm/errors";

export interface EpisodeFileLocation {
  outDir: string;
  taskId: string;
  /** The date partition: a time (its UTC day is used) or `yyyy-mm-dd`. */
  date: Date | string;
  episodeId: string;
}

export function episodeFilePath(loc: EpisodeFileLocation): string {
  return path.join(dateDir(loc.outDir, loc.taskId, loc.date), episodeFileName(loc.episodeId));
}

/** `<out>/task=<id>/date=<day>`; throws `invalid_options` for a date that names no day. */
export function dateDir(outDir: string, taskId: string, date: Date | string): string {
  const day = partitionDay(date);
  if (!day) throw new TrajectoryError("invalid_options", `date partition ${JSON.stringify(String(date))} is not a valid time or yyyy-mm-dd`);
  return path.join(taskDir(outDir, taskId), `date=${day}`);
}

/**
 * The episode's file in any date partition of its task (newest date first), or undefined. Callers that
 * derive the date from something that can change between attempts (a job re-added on another day) use
 * this to find an episode that is already stored.
 */
export async function findEpisodeFile(outDir: string, taskId: string, episodeId: string): Promise<string | undefined> {
  const dir = taskDir(outDir, taskId);
  const name = episodeFileName(episodeId);
  const dates = (await readdirOrEmpty(dir)).filter((d) => d.startsWith("date=")).sort().reverse();
  for (const d of dates) {
    const file = path.join(dir, d, name);
    if (await isFile(file)) return file;
  }
  return undefined;
}

/** The (first) record of an episode file, or undefined when the file does not exist. */
export async function readEpisodeFile(file: string): Promise<StoredEpisode | undefined> {
  if (!(await isFile(file))) return undefined;
  const opened = await openTrajectoryFile(file);
  let first: StoredEpisode | undefined;
  for await (const ep of opened.episodes) first ??= ep; // drain: the generator closes the file at the end
  return first;
}

/**
 * Removes hidden temporaries of episode files (`.<file>.<hex>.tmp`) older than `olderThanMs` from every
 * partition: left by a process that died while writing (or, already linked, just before unlinking the
 * temporary name, in which case the published file keeps its data). Never touches TrajectoryWriter's
 * temporaries. Returns how many were removed.
 */
export async function removeStaleEpisodeTempFiles(outDir: string, olderThanMs: number): Promise<number> {
  let removed = 0;
  for (const t of (await readdirOrEmpty(outDir)).filter((n) => n.startsWith("task="))) {
    for (const d of (await readdirOrEmpty(path.join(outDir, t))).filter((n) => n.startsWith("date="))) {
      const dir = path.join(outDir, t, d);
      for (const name of (await readdirOrEmpty(dir)).filter(isEpisodeTempFileName)) {
        const file = path.join(dir, name);
        try {
          if (Date.now() - (await stat(file)).mtimeMs < olderThanMs) continue; // may still be written
          await unlink(file);
          removed++;
        } catch (err) {
          if (errnoCode(err) !== "ENOENT") throw err; // gone meanwhile: published or swept by another process
        }
      }
    }
  }
  return removed;
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch (err) {
    if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") return false;
    throw err;
  }
}
