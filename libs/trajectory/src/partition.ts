/**
 * File layout: <out>/task=<escaped task id>/date=<yyyy-mm-dd>/<writer>-<seq>.avro (Hive-style partitions
 * that Spark and BigQuery discover). While being written a file is named .<writer>-<seq>.avro.tmp in the
 * same folder: hidden from Spark/BigQuery (leading dot) and skipped by our reader.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";

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
  return path.join(outDir, `task=${escapePartitionValue(taskId)}`, `date=${partitionDate(startedAt)}`);
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
  let names: string[] = [];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  for (const name of names) {
    const m = pattern.exec(name);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return max + 1;
}
