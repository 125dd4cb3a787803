/**
 * `farm bench export`: `farm trajectories export --format parquet` (the real command, in a child
 * process, so its peak RSS is its own) beside DuckDB writing the same rows to Parquet (zstd) in this
 * process: rows handed to DuckDB's appender, then COPY … TO. Both from the same Avro input; MB/s is
 * MB of that input (Avro files) per second, so the two figures compare the time for the same job.
 * Our side includes reading and decoding the Avro files (twice: plan + write); DuckDB's starts from
 * rows already decoded in memory. A third line times our writer alone on the same in-memory rows.
 * Options: --episodes N (default 300), --steps N (100), --frame-every K (2), --frame-size px (64), --shard-mb (100).
 * Last line: `rows=<n> export_mb_s=<a> duckdb_mb_s=<b> ratio=<a/b> peak_rss_mb=<m>`. Goal: ratio ≥ 0.5.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DuckDBInstance, blobValue, listValue, structValue, type DuckDBAppender, type DuckDBType, type DuckDBValue } from "@duckdb/node-api";
import { ExtrasSpec, arrowSchema, buildTable, parquetBytes, stepColumns, ShardRows, type ColumnType, type ExportReport } from "@farm/dataset";
import { readTrajectories, syntheticEpisode, TrajectoryWriter, type StoredEpisode } from "@farm/trajectory";
import { encodeRgbPng } from "@farm/png";
import { seededRandomFromState } from "@farm/seeded-random";
import { intOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** A distinct PNG per step (noisy screens, as real screenshots differ): zstd cannot shrink them much. */
function distinctPng(size: number, seed: number): Buffer {
  const r = seededRandomFromState(seed);
  const rgb = new Uint8Array(size * size * 3);
  for (let i = 0; i < rgb.length; i++) rgb[i] = ((i >> 6) * 37 + (r.next() < 0.3 ? r.next() * 255 : 0)) & 255;
  return encodeRgbPng(size, size, rgb);
}

async function makeInput(dir: string, o: { episodes: number; steps: number; frameEvery: number; frameSize: number }): Promise<void> {
  const w = await TrajectoryWriter.open({ outDir: dir, writerId: "bench", frameEvery: o.frameEvery });
  for (let i = 0; i < o.episodes; i++) {
    const e = syntheticEpisode(i, { steps: o.steps });
    if (o.frameEvery > 0) for (const s of e.steps) if (s.index % o.frameEvery === 0) s.frame = distinctPng(o.frameSize, i * 100_003 + s.index);
    await w.append(e);
  }
  await w.close();
}

async function dirBytes(dir: string): Promise<number> {
  let n = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) n += (await stat(path.join(e.parentPath, e.name))).size;
  return n;
}

/** The real command in a child; its JSON report. */
function runExport(input: string, out: string, shardMb: number): Promise<ExportReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO, "services/cli/bin/farm.js"), "trajectories", "export", "--format", "parquet", input, "--out", out, "--shard-mb", String(shardMb), "--json"], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, FARM_LOG_LEVEL: "warn" } });
    let text = "";
    child.stdout.on("data", (d: Buffer) => (text += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(text) as ExportReport) : reject(new Error(`export exited ${code}: ${text}`))));
  });
}

function duckType(t: ColumnType): string {
  const el: Record<string, string> = { int8: "TINYINT", int16: "SMALLINT", int32: "INTEGER", int64: "BIGINT", uint8: "UTINYINT", uint16: "USMALLINT", uint32: "UINTEGER", uint64: "UBIGINT", float32: "FLOAT", float64: "DOUBLE", bool: "BOOLEAN", string: "VARCHAR" };
  switch (t.kind) {
    case "value": return el[t.element]!;
    case "timestamp": return "TIMESTAMPTZ";
    case "image": return "STRUCT(bytes BLOB, path VARCHAR)";
    case "images": return "STRUCT(bytes BLOB, path VARCHAR)[]";
    case "list": return `${el[t.element]!}${"[]".repeat(t.rank)}`;
    case "structs": return `STRUCT(${t.fields.map((f) => `"${f.name}" ${el[f.element]!}`).join(", ")})[]`;
  }
}

function duckValue(v: unknown, t: ColumnType, depth = 0): DuckDBValue {
  if (v === null || v === undefined) return null;
  if (t.kind === "image") return structValue({ bytes: blobValue((v as { bytes: Uint8Array }).bytes), path: null });
  if (t.kind === "images") return listValue((v as unknown[]).map((x) => duckValue(x, { kind: "image" })));
  if (t.kind === "list" && depth < t.rank) return listValue((v as unknown[]).map((x) => duckValue(x, t, depth + 1)));
  if (t.kind === "structs") return listValue((v as Record<string, DuckDBValue>[]).map((x) => structValue(x)));
  return v as DuckDBValue;
}

/** DuckDB: appender from the rows in memory, then COPY to a zstd Parquet file. Seconds. */
async function duckdbWrite(rows: ShardRows, defs: ReturnType<typeof stepColumns>, file: string): Promise<number> {
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    const q = (s: string) => `"${s.replaceAll('"', '""')}"`;
    await conn.run(`CREATE TABLE steps (${defs.map((d) => `${q(d.name)} ${duckType(d.type)}`).join(", ")})`);
    const types: DuckDBType[] = (await conn.runAndReadAll("SELECT * FROM steps LIMIT 0")).columnTypes();
    const t0 = performance.now();
    const app: DuckDBAppender = await conn.createAppender("steps");
    for (let r = 0; r < rows.stepCount; r++) {
      for (let c = 0; c < defs.length; c++) app.appendValue(duckValue(rows.steps[c]![r], defs[c]!.type), types[c]);
      app.endRow();
    }
    app.closeSync();
    await conn.run(`COPY steps TO '${file.replaceAll("'", "''")}' (FORMAT parquet, COMPRESSION zstd)`);
    return (performance.now() - t0) / 1000;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

export const scenario: Scenario = {
  async run(opts: BenchOptions) {
    const o = { episodes: intOpt(opts, "episodes", 300), steps: intOpt(opts, "steps", 100), frameEvery: intOpt(opts, "frame-every", 2, 0), frameSize: intOpt(opts, "frame-size", 64), shardMb: intOpt(opts, "shard-mb", 100) };
    const dir = await mkdtemp(path.join(os.tmpdir(), "bench-export-"));
    try {
      const input = path.join(dir, "avro");
      await makeInput(input, o);
      const inputMb = (await dirBytes(input)) / 1e6;
      console.log(`input: ${o.episodes} episodes x ${o.steps} steps, a distinct PNG ${o.frameSize}px frame every ${o.frameEvery} steps: ${inputMb.toFixed(1)} MB Avro (deflate)`);

      const ours = await runExport(input, path.join(dir, "ours"), o.shardMb);
      const oursMbS = inputMb / ours.seconds;
      console.log(`ours (farm trajectories export, child process): ${ours.steps} rows in ${ours.seconds.toFixed(2)} s = ${(ours.steps / ours.seconds).toFixed(0)} rows/s, ${oursMbS.toFixed(1)} MB/s, ${(ours.bytesWritten / 1e6).toFixed(1)} MB Parquet in ${ours.shardsWritten} shard(s), peak RSS ${ours.peakRssMb.toFixed(0)} MB`);

      // The same rows in memory for DuckDB (and for our writer alone).
      const episodes: StoredEpisode[] = [];
      for await (const e of readTrajectories(input)) episodes.push(e);
      const spec = new ExtrasSpec();
      for (const e of episodes) for (const s of e.steps) spec.add(s.extras);
      const extras = spec.columns();
      const rows = new ShardRows(extras, { extrasUnrepresentable: 0 });
      for (const e of episodes) rows.addEpisode(e);
      const defs = stepColumns(extras);

      const duckFile = path.join(dir, "duckdb.parquet");
      const duckSec = await duckdbWrite(rows, defs, duckFile);
      const duckMbS = inputMb / duckSec;
      console.log(`duckdb (appender + COPY TO, same rows from memory): ${rows.stepCount} rows in ${duckSec.toFixed(2)} s = ${(rows.stepCount / duckSec).toFixed(0)} rows/s, ${duckMbS.toFixed(1)} MB/s, ${((await stat(duckFile)).size / 1e6).toFixed(1)} MB Parquet`);

      const t0 = performance.now();
      const bytes = parquetBytes(buildTable(arrowSchema(defs, new Map()), rows.steps), { compression: "zstd", rowGroupRows: 4096 });
      const writerSec = (performance.now() - t0) / 1000;
      console.log(`ours, writer alone (Arrow buffers + parquet-wasm, same rows from memory): ${writerSec.toFixed(2)} s = ${(rows.stepCount / writerSec).toFixed(0)} rows/s, ${(inputMb / writerSec).toFixed(1)} MB/s, ${(bytes.byteLength / 1e6).toFixed(1)} MB Parquet`);
      console.log(`rows=${ours.steps} export_mb_s=${oursMbS.toFixed(2)} duckdb_mb_s=${duckMbS.toFixed(2)} ratio=${(oursMbS / duckMbS).toFixed(3)} peak_rss_mb=${ours.peakRssMb.toFixed(0)}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};
