/**
 * File layout: <out>/task=<escaped task id>/date=<yyyy-mm-dd>/<writer>-<seq>.avro (Hive-style partitions
 * that Spark and BigQuery discover). While being written a file is named .<writer>-<seq>.avro.tmp in the
 * same folder: hidden from Spark/BigQuery (leading dot) and skipped by our reader. Single-episode files
 * (episode-file.ts) are <episode id>.avro in the same partitions, written as .<episode id>.avro.<hex>.tmp.
 */
import { mkdir, readdir } from "node:fs/promises";
import path from "node:path";
import { errnoCode } from "@farm/errors";

const SAFE = /^[A-Za-z0-9_-]$/;

/** Percent-encodes (UTF-8, upper-case hex) every byte outside [A-Za-z0-9_-] so any task id is one safe path component. */
export function escapePartitionValue(value: string): string {
  let out = "";
  for (const ch of value) {
    if (SAFE.test(ch)) out += ch;
    else for (const b of Buffer.from(ch, "utf8")) out += `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

export function unescapePartitionValue(escaped: string): string {
  return decodeURIComponent(escaped);
}

/** The UTC date of the episode start: the date partition. */
export function partitionDate(startedAt: Date): string {
  return startedAt.toISOString().slice(0, 10);
}

export function partitionDir(outDir: string, taskId: string, startedAt: Date): string {
  return path.join(taskDir(outDir, taskId), `date=${partitionDate(startedAt)}`);
}

/** The folder holding every date partition of a task. */
export function taskDir(outDir: string, taskId: string): string {
  return path.join(outDir, `task=${escapePartitionValue(taskId)}`);
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A date partition value from a time (its UTC day) or an explicit `yyyy-mm-dd`; undefined when neither. */
export function partitionDay(date: Date | string): string | undefined {
  // Round trip through Date: rejects 2026-02-31 as well as malformed text.
  if (typeof date === "string") return DAY.test(date) && partitionDay(new Date(`${date}T00:00:00Z`)) === date ? date : undefined;
  return Number.isNaN(date.getTime()) ? undefined : partitionDate(date);
}

const FILE_SAFE = /^[A-Za-z0-9_.-]$/;

/**
 * `<episode id>.avro`, percent-encoding (like task ids) every byte outside [A-Za-z0-9_.-] and a leading
 * dot, so any id is one visible file name. Farm ids (`<campaignId>-<index>`) come out unchanged.
 */
export function episodeFileName(episodeId: string): string {
  let out = "";
  for (const ch of episodeId) {
    if (FILE_SAFE.test(ch) && !(out === "" && ch === ".")) out += ch;
    else out += escapePartitionValue(ch);
  }
  return `${out}.avro`;
}

/** A name an episode file may be published under: visible to readers, one path component, `.avro`. */
export function isPublishableFileName(name: string): boolean {
  return name.endsWith(".avro") && name.length > ".avro".length && !isInvisibleName(name) && !name.includes("/") && !name.includes("\\") && name.length <= 255;
}

const EPISODE_TEMP = /^\..+\.avro\.[0-9a-f]{16}\.tmp$/;

/**
 * Hidden temporary name of an episode file being written: `.<file>.<16 hex>.tmp`, unique per attempt
 * and distinct from TrajectoryWriter's `.<writer>-<seq>.avro.tmp` (so sweeping one never touches the other).
 */
export function episodeTempFileName(fileName: string, token: string): string {
  return `.${fileName}.${token}.tmp`;
}

export function isEpisodeTempFileName(name: string): boolean {
  return EPISODE_TEMP.test(name);
}

const SEQ_DIGITS = 6;

export function finalFileName(writerId: string, seq: number): string {
  return `${writerId}-${String(seq).padStart(SEQ_DIGITS, "0")}.avro`;
}

export function tempFileName(writerId: string, seq: number): string {
  return `.${finalFileName(writerId, seq)}.tmp`;
}

/** Names readers must never open: hidden files and temporaries. */
export function isInvisibleName(name: string): boolean {
  return name.startsWith(".") || name.endsWith(".tmp");
}

/** Writer ids become part of file names: keep them to safe characters. */
export function isValidWriterId(id: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/.test(id) && !id.endsWith(".tmp");
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * First unused sequence number of `writerId` in `dir`, counting finished and temporary files, so a
 * restarted writer never reuses (and a rename never replaces) an earlier file.
 */
export async function nextSequence(dir: string, writerId: string): Promise<number> {
  const pattern = new RegExp(`^\\.?${escapeRegex(writerId)}-(\\d+)\\.avro(\\.tmp)?$`);
  let max = 0;
  for (const name of await readdirOrEmpty(dir)) {
    const m = pattern.exec(name);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return max + 1;
}

/** The names in a folder; none when it does not exist or is not a folder. */
export async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") return [];
    throw err;
  }
}

/**
 * Runs `write`, which creates a file in `dir`; when the folder is missing (ENOENT), creates it and runs `write`
 * once more. Folders (one per task and day) usually exist, so this saves a `mkdir` per file.
 */
export async function inFolder<T>(dir: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (errnoCode(err) !== "ENOENT") throw err;
    await mkdir(dir, { recursive: true });
    return write();
  }
}
