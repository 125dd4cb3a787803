/**
 * `manifest.json`: which episodes each shard holds, the extras columns, and how the data set was
 * written. Contains nothing that changes between two exports of the same input (no times, no paths).
 * `manifest.json.pending` is the journal of a run that is publishing (see export.ts).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { ExtraColumn } from "./extras-spec.ts";
import type { ParquetCompression } from "./parquet-file.ts";
import type { DatasetLayout } from "./tables.ts";
import { coerceError } from "@farm/errors";

export const MANIFEST = "manifest.json";
export const PENDING = "manifest.json.pending";
export const MANIFEST_FORMAT = "farm-dataset/1";

export interface ShardEntry {
  /** Relative paths of the shard's two files. */
  steps: string;
  episodes: string;
  rows: number;
  bytes: number;
  episodeIds: string[];
}

export interface Manifest {
  format: string;
  /** How `data/` is laid out; absent in manifests written before layouts existed (= `steps`). */
  layout?: DatasetLayout;
  compression: ParquetCompression;
  extras: ExtraColumn[];
  /** Export runs that added shards (1 for a full export). */
  runs: number;
  shards: ShardEntry[];
}

/** The manifest plus the renames that publish it, written before the first rename. */
export interface PendingManifest extends Manifest {
  renames: [from: string, to: string][];
}

export async function readManifest<T extends Manifest = Manifest>(dir: string, name = MANIFEST): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(dir, name), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  let m: T;
  try {
    m = JSON.parse(text) as T;
  } catch (err) {
    throw new Error(`${path.join(dir, name)}: not valid JSON (${coerceError(err).message}); the data set's manifest is damaged: export again into a new folder`);
  }
  if (m?.format !== MANIFEST_FORMAT) throw new Error(`${path.join(dir, name)}: format ${JSON.stringify(m.format)} is not ${MANIFEST_FORMAT}`);
  return m;
}

export function manifestJson(m: Manifest): string {
  return `${JSON.stringify(m, null, 1)}\n`;
}

/** `data/train-00003-of-00010.parquet` */
export function shardName(table: "data" | "episodes", index: number, total: number): string {
  return `${table}/train-${String(index).padStart(5, "0")}-of-${String(total).padStart(5, "0")}.parquet`;
}
