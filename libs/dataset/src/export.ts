/**
 * `exportParquet`: trajectory files → a Hugging Face data set folder of Parquet shards.
 *
 *   <out>/data/train-NNNNN-of-MMMMM.parquet       steps (one row per step)
 *   <out>/episodes/train-NNNNN-of-MMMMM.parquet   the same shard's episodes (one row each)
 *   <out>/manifest.json                           shards → episode ids, extras columns
 *   <out>/README.md                               data set card (configs + features)
 *
 * Streaming: episodes are read file by file, collected into one shard at a time and written when the
 * shard is full, so memory is bounded by the shard size, not the input. Shards are written under hidden
 * temporary names. Publishing (the names need the final count MMMMM): the new manifest and the list of
 * renames are written to `manifest.json.pending` first, then every shard is renamed to its final name
 * (earlier shards of an incremental export get the new total too), then the card and `manifest.json`.
 * Each rename is atomic, so a reader sees every episode in exactly one visible file at any moment; a run
 * that dies mid-publish is finished by the next run from the pending file.
 */
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { openTrajectoryFile } from "@farm/trajectory";
import { arrowSchema, buildTable } from "./arrow-table.ts";
import { datasetCard } from "./card.ts";
import { ExtrasSpec } from "./extras-spec.ts";
import { huggingfaceMetadata } from "./features.ts";
import { MANIFEST, MANIFEST_FORMAT, PENDING, manifestJson, readManifest, shardName, type Manifest, type PendingManifest, type ShardEntry } from "./manifest.ts";
import { parquetBytes, syncDir, writeFileAtomic, writeFileSynced, type ParquetCompression } from "./parquet-file.ts";
import { writeSteps } from "./parquet-stream.ts";
import { planExport, type SkippedEpisode, type SkippedFile } from "./plan.ts";
import { ShardRows, episodeBound, type RowCounters } from "./rows.ts";
import { DATASET_LAYOUTS, EPISODE_COLUMNS, dataColumns, type DatasetLayout } from "./tables.ts";

export interface ExportOptions {
  /** Maximum bytes of one steps shard (default 100 MB). A single episode larger than this gets a shard of its own. */
  shardBytes?: number;
  compression?: ParquetCompression;
  /** Add only episodes not in the folder's manifest (the folder may be empty). */
  incremental?: boolean;
  /** Memory budget per trajectory file read (default 256 MiB; the CLI's FARM_TRAJECTORY_READ_BUDGET_MB). */
  memoryBudgetBytes?: number;
  /** Rows per Parquet row group (default 4096). */
  rowGroupRows?: number;
  /** `steps` (default): one row per step; `episodes-nested`: one row per episode, its steps as lists. */
  layout?: DatasetLayout;
}

export interface ExportReport {
  outDir: string;
  episodes: number;
  steps: number;
  frames: number;
  /** Shards written by this run, and in the data set after it. */
  shardsWritten: number;
  shardsTotal: number;
  bytesWritten: number;
  alreadyExported: number;
  corruptFiles: SkippedFile[];
  invalidEpisodes: SkippedEpisode[];
  duplicates: SkippedEpisode[];
  extrasUnrepresentable: number;
  /** Shards over the size limit because one episode alone is larger. */
  oversizedShards: number;
  seconds: number;
  peakRssMb: number;
}

export const DEFAULT_SHARD_BYTES = 100 * 1000 * 1000;
/** Room left in a shard for the footer (schema, row group metadata, statistics). */
const FOOTER_RESERVE = 256 * 1024;

interface WrittenShard {
  tmpSteps: string;
  tmpEpisodes: string;
  rows: number;
  bytes: number;
  episodeIds: string[];
}

export async function exportParquet(inputs: readonly string[], outDir: string, o: ExportOptions = {}): Promise<ExportReport> {
  const started = performance.now();
  const limit = o.shardBytes ?? DEFAULT_SHARD_BYTES;
  if (!(limit >= 1e6)) throw new Error(`shard size must be at least 1 MB (10^6 bytes), got ${limit} bytes`);
  const compression = o.compression ?? "zstd";
  const layout = o.layout ?? "steps";
  if (!DATASET_LAYOUTS.includes(layout)) throw new Error(`layout must be ${DATASET_LAYOUTS.join(" or ")}, got ${JSON.stringify(layout)}`);
  await mkdir(path.join(outDir, "data"), { recursive: true });
  await mkdir(path.join(outDir, "episodes"), { recursive: true });
  await finishPending(outDir);
  const previous = await readManifest(outDir);
  if (previous && !o.incremental) throw new Error(`${outDir} already holds a data set (manifest.json): use --incremental to add episodes, or an empty folder`);
  if (!previous && (await holdsShards(outDir))) throw new Error(`${outDir} holds Parquet shards but no manifest.json: use an empty folder`);
  if (previous && previous.compression !== compression) throw new Error(`${outDir} was exported with ${previous.compression}; pass --compression ${previous.compression}`);
  if (previous && (previous.layout ?? "steps") !== layout) throw new Error(`${outDir} holds the ${previous.layout ?? "steps"} layout; pass --layout ${previous.layout ?? "steps"}`);
  await removeStaleTemporaries(outDir);

  const exported = new Set(previous?.shards.flatMap((s) => s.episodeIds));
  const read = o.memoryBudgetBytes === undefined ? {} : { memoryBudgetBytes: o.memoryBudgetBytes };
  const plan = await planExport(inputs, { ...read, ...(previous ? { exported, extras: ExtrasSpec.from(previous.extras) } : {}) });
  const extras = plan.extras.columns();
  const stepDefs = dataColumns(layout, extras);
  const stepSchema = arrowSchema(stepDefs, new Map([["huggingface", huggingfaceMetadata(stepDefs)]]));
  const episodeSchema = arrowSchema(EPISODE_COLUMNS, new Map([["huggingface", huggingfaceMetadata(EPISODE_COLUMNS)]]));
  const run = (previous?.runs ?? 0) + 1;
  const counters: RowCounters = { extrasUnrepresentable: 0 };
  const written: WrittenShard[] = [];
  const report = { steps: 0, frames: 0, oversized: 0 };
  let ratio = 1; // observed Parquet bytes / bound, from the previous shard (frames repeat too: static screens)

  let tmpIndex = 0;
  const writeShard = async (rows: ShardRows): Promise<void> => {
    const shard: ShardInput = { steps: rows.steps, stepRows: rows.dataRowCount, episodes: rows.episodes, episodeIds: rows.episodeIds, stepCounts: rows.dataRows, boundBytes: rows.boundBytes };
    for (const part of await writeFitting(shard)) written.push(part);
  };
  /** Writes the rows as one shard, or splits them (by episodes) until every part fits the limit. */
  const writeFitting = async (shard: ShardInput): Promise<WrittenShard[]> => {
    const j = tmpIndex++;
    const tmpSteps = path.join("data", `.run${run}-${j}.parquet.tmp`);
    const tmpEpisodes = path.join("episodes", `.run${run}-${j}.parquet.tmp`);
    const bytes = await writeSteps(path.join(outDir, tmpSteps), stepSchema, shard, { compression, rowGroupRows: o.rowGroupRows ?? 4096 });
    if (bytes > limit && shard.episodeIds.length > 1) {
      await rm(path.join(outDir, tmpSteps));
      const [a, b] = splitShard(shard);
      return [...(await writeFitting(a)), ...(await writeFitting(b))];
    }
    if (bytes > limit) report.oversized++;
    if (shard.boundBytes > 0) ratio = Math.min(1, Math.max(0.02, bytes / shard.boundBytes));
    await writeFileSynced(path.join(outDir, tmpEpisodes), parquetBytes(buildTable(episodeSchema, shard.episodes), { compression, rowGroupRows: 1 << 20 }));
    return [{ tmpSteps, tmpEpisodes, rows: shard.stepRows, bytes, episodeIds: shard.episodeIds }];
  };

  let rows = new ShardRows(extras, counters, layout);
  const predicted = (r: { boundBytes: number; frameBytes: number }) => r.boundBytes * ratio + FOOTER_RESERVE;
  for (const { file, take } of plan.files) {
    const opened = await openTrajectoryFile(file, read);
    let position = -1;
    for await (const e of opened.episodes) {
      if (!take.has(++position)) continue; // the plan's choice: skipped, invalid and duplicate records stay out
      const add = episodeBound(e, extras);
      const next = { boundBytes: rows.boundBytes + add.boundBytes, frameBytes: rows.frameBytes + add.frameBytes };
      // Start a new shard when this episode would push the prediction over the limit, or the rows held
      // reach the limit uncompressed (the memory bound; data that compresses well gives smaller shards).
      if (rows.stepCount > 0 && (predicted(next) > limit || next.boundBytes > limit)) {
        await writeShard(rows);
        rows = new ShardRows(extras, counters, layout);
      }
      rows.addEpisode(e);
      report.steps += e.steps.length;
      if (e.initialFrame) report.frames++;
      for (const s of e.steps) if (s.frame) report.frames++;
    }
  }
  if (rows.episodeIds.length > 0) await writeShard(rows);

  const manifest = await publish(outDir, previous, written, { compression, extras: extras, run, layout });
  return {
    outDir,
    episodes: written.reduce((n, s) => n + s.episodeIds.length, 0),
    steps: report.steps,
    frames: report.frames,
    shardsWritten: written.length,
    shardsTotal: manifest.shards.length,
    bytesWritten: written.reduce((n, s) => n + s.bytes, 0),
    alreadyExported: plan.alreadyExported,
    corruptFiles: plan.corruptFiles,
    invalidEpisodes: plan.invalidEpisodes,
    duplicates: plan.duplicates,
    extrasUnrepresentable: counters.extrasUnrepresentable,
    oversizedShards: report.oversized,
    seconds: (performance.now() - started) / 1000,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
  };
}

/** A shard's rows ready to write: data-table (steps, or nested episodes) and episodes columns as values. */
interface ShardInput {
  steps: unknown[][];
  /** Rows of the data table. */
  stepRows: number;
  episodes: unknown[][];
  episodeIds: string[];
  /** Data-table rows of each episode. */
  stepCounts: number[];
  boundBytes: number;
}

/** Two halves (by episodes) of a shard (the column arrays are copied shallowly; values are shared). */
function splitShard(s: ShardInput): [ShardInput, ShardInput] {
  const half = Math.ceil(s.episodeIds.length / 2);
  let stepSplit = 0;
  for (let i = 0; i < half; i++) stepSplit += s.stepCounts[i]!;
  const share = stepSplit / Math.max(1, s.stepRows);
  const part = (from: number, to: number, sFrom: number, sTo: number, bound: number): ShardInput => ({
    steps: s.steps.map((col) => col.slice(sFrom, sTo)),
    stepRows: sTo - sFrom,
    episodes: s.episodes.map((col) => col.slice(from, to)),
    episodeIds: s.episodeIds.slice(from, to),
    stepCounts: s.stepCounts.slice(from, to),
    boundBytes: bound,
  });
  return [part(0, half, 0, stepSplit, s.boundBytes * share), part(half, s.episodeIds.length, stepSplit, s.stepRows, s.boundBytes * (1 - share))];
}

/** Final names for all shards (old ones renumbered to the new total), journal, renames, card, manifest. */
async function publish(
  outDir: string,
  previous: Manifest | undefined,
  written: WrittenShard[],
  o: { compression: ParquetCompression; extras: Manifest["extras"]; run: number; layout: DatasetLayout },
): Promise<Manifest> {
  const old = previous?.shards ?? [];
  const total = old.length + written.length;
  const renames: [string, string][] = [];
  const shards: ShardEntry[] = [];
  old.forEach((s, i) => {
    const steps = shardName("data", i, total);
    const episodes = shardName("episodes", i, total);
    if (s.steps !== steps) renames.push([s.steps, steps], [s.episodes, episodes]);
    shards.push({ ...s, steps, episodes });
  });
  written.forEach((w, j) => {
    const steps = shardName("data", old.length + j, total);
    const episodes = shardName("episodes", old.length + j, total);
    renames.push([w.tmpSteps, steps], [w.tmpEpisodes, episodes]);
    shards.push({ steps, episodes, rows: w.rows, bytes: w.bytes, episodeIds: w.episodeIds });
  });
  const manifest: Manifest = { format: MANIFEST_FORMAT, layout: o.layout, compression: o.compression, extras: o.extras, runs: written.length > 0 || !previous ? o.run : previous.runs, shards };
  if (previous && written.length === 0) return previous; // nothing new: leave the folder as it is
  const pending: PendingManifest = { ...manifest, renames };
  await writeFileAtomic(path.join(outDir, PENDING), manifestJson(pending));
  await finishPending(outDir);
  return manifest;
}

/** Completes a publish whose journal exists: idempotent renames, then card and manifest. */
async function finishPending(outDir: string): Promise<void> {
  const pending = await readManifest<PendingManifest>(outDir, PENDING);
  if (!pending) return;
  // Renumbering can map an old name onto another old shard's old name only if totals were equal,
  // which never happens (a run adds ≥ 1 shard): targets are always free. Renames are done in order;
  // one whose source is gone and target exists was done before the interruption.
  for (const [from, to] of pending.renames) {
    const src = path.join(outDir, from);
    const dst = path.join(outDir, to);
    if (await exists(src)) await rename(src, dst);
    else if (!(await exists(dst))) throw new Error(`cannot finish the interrupted export in ${outDir}: neither ${from} nor ${to} exists`);
  }
  await syncDir(path.join(outDir, "data"));
  await syncDir(path.join(outDir, "episodes"));
  const { renames: _done, ...manifest } = pending;
  await writeFileAtomic(path.join(outDir, "README.md"), datasetCard(manifest));
  await writeFileAtomic(path.join(outDir, MANIFEST), manifestJson(manifest));
  await rm(path.join(outDir, PENDING));
  await syncDir(outDir);
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}

async function holdsShards(outDir: string): Promise<boolean> {
  return (await readdir(path.join(outDir, "data"))).some((n) => n.endsWith(".parquet") && !n.startsWith("."));
}

/** Temporaries of a run that died before its journal was written: never published, safe to delete. */
async function removeStaleTemporaries(outDir: string): Promise<void> {
  for (const table of ["data", "episodes"]) {
    for (const n of await readdir(path.join(outDir, table))) {
      if (n.startsWith(".run") && n.endsWith(".parquet.tmp")) await rm(path.join(outDir, table, n));
    }
  }
}

