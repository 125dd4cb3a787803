/** Test helpers: trajectory inputs made by the real writer, and independent Parquet readers (DuckDB, hyparquet). */
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { parquetMetadata, parquetReadObjects, parquetSchema } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { TrajectoryWriter, syntheticEpisode, type EpisodeRecord } from "@farm/trajectory";

const made: string[] = [];
// Registered at load (the file's root), so folders live until every test of the file is done.
after(() => Promise.all(made.map((d) => rm(d, { recursive: true, force: true }))));

export async function tempDir(prefix = "dataset-"): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Distinct pseudo-random frame bytes (a stand-in for screenshots that do not compress). */
function frameBytes(seed: number, size: number): Buffer {
  const out = Buffer.alloc(size);
  let h = createHash("sha256").update(String(seed)).digest();
  for (let i = 0; i < size; i += h.length) {
    h.copy(out, i);
    h = createHash("sha256").update(h).digest();
  }
  return out;
}

/**
 * A campaign's episodes as the worker would store them: synthetic 2048 episodes with the task's extras,
 * plus an INT64 and an OBJECT extra on some steps and a distinct frame on every 2nd step.
 */
export function campaignEpisodes(n: number, first = 0, campaignId = "camp-a"): EpisodeRecord[] {
  return Array.from({ length: n }, (_, k) => {
    const i = first + k;
    const e = syntheticEpisode(i, { campaignId, episodeIndex: i, steps: 15 + (i % 7), frames: true });
    e.frameEvery = 2;
    for (const s of e.steps) {
      s.frame = frameBytes(i * 1000 + s.index, 4000 + ((i + s.index) % 5) * 500);
      if (s.index % 3 === 0) s.extras.push({ name: "ticks", dtype: "INT64", shape: [2], value: [s.index * 1_000_000_007, -s.index] });
      if (s.index % 4 === 0) s.extras.push({ name: "info", dtype: "OBJECT", shape: [], value: { level: s.index, tags: ["a", "b"] } });
      if (s.index === 5) s.extras.push({ name: "score", dtype: "INT32", shape: [], value: 7 }); // logged twice in one step
    }
    return e;
  });
}

export async function writeAvro(outDir: string, writerId: string, records: EpisodeRecord[], maxEpisodesPerFile = 4): Promise<void> {
  const w = await TrajectoryWriter.open({ outDir, writerId, maxEpisodesPerFile });
  for (const r of records) await w.append(r);
  await w.close();
}

export async function parquetFiles(dir: string, table: "data" | "episodes"): Promise<string[]> {
  return (await readdir(path.join(dir, table))).filter((n) => n.endsWith(".parquet") && !n.startsWith(".")).sort().map((n) => path.join(dir, table, n));
}

/** Rows of all files with hyparquet (pure JavaScript Parquet reader). */
export async function hyparquetRows(files: string[]): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for (const f of files) {
    const buf = await readFile(f);
    const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    rows.push(...((await parquetReadObjects({ file, compressors, utf8: false })) as Record<string, unknown>[]));
  }
  return rows;
}

/** The schema tree of a Parquet file as hyparquet reads it. */
export async function hyparquetSchema(file: string): Promise<ReturnType<typeof parquetSchema>> {
  const buf = await readFile(file);
  return parquetSchema(parquetMetadata(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)));
}

/** Runs SQL in a fresh in-memory DuckDB; rows as JSON-safe objects. */
export async function duckdb(sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    return (await conn.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

export const sqlList = (files: string[]) => `[${files.map((f) => `'${f.replaceAll("'", "''")}'`).join(", ")}]`;

/** A Parquet column as the card's `features` entry should describe it (from hyparquet's schema tree). */
export function featureOf(node: Awaited<ReturnType<typeof hyparquetSchema>>): unknown {
  const name = node.element.name;
  return { name, ...typeOf(node) };
}

function typeOf(node: Awaited<ReturnType<typeof hyparquetSchema>>): Record<string, unknown> {
  const el = node.element;
  const lt = el.logical_type as { type?: string; bitWidth?: number; isSigned?: boolean; unit?: string; isAdjustedToUTC?: boolean } | undefined;
  if (lt?.type === "LIST" || el.converted_type === "LIST") {
    const inner = node.children[0]!.children[0]!; // <name> (LIST) → list (repeated) → element
    // A list of records (not an image): the card's `list:` of the record's fields.
    const innerList = (inner.element.logical_type as { type?: string } | undefined)?.type === "LIST" || inner.element.converted_type === "LIST";
    if (!innerList && inner.children.length > 0 && inner.children.map((c) => c.element.name).join(",") !== "bytes,path") return { list: inner.children.map(featureOf) };
    const t = typeOf(inner);
    return { sequence: "dtype" in t ? t.dtype : t };
  }
  if (node.children.length > 0) {
    const names = node.children.map((c) => c.element.name).join(",");
    if (names === "bytes,path") return { dtype: "image" };
    throw new Error(`unexpected struct ${el.name}: ${names}`);
  }
  if (lt?.type === "STRING" || el.converted_type === "UTF8") return { dtype: "string" };
  if (lt?.type === "TIMESTAMP") return { dtype: `timestamp[${({ MILLIS: "ms", MICROS: "us", NANOS: "ns" } as Record<string, string>)[String(lt.unit)]}, tz=${lt.isAdjustedToUTC ? "UTC" : "?"}]` };
  if (lt?.type === "INTEGER") return { dtype: `${lt.isSigned ? "int" : "uint"}${lt.bitWidth}` };
  const physical: Record<string, string> = { INT32: "int32", INT64: "int64", FLOAT: "float32", DOUBLE: "float64", BOOLEAN: "bool" };
  const t = physical[el.type ?? ""];
  if (!t) throw new Error(`unexpected column ${el.name}: ${JSON.stringify(el)}`);
  return { dtype: t };
}
