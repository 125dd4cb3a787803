/** `farm trajectories query`: SQL over an exported data set with DuckDB; views `steps` (or `trajectories`) and `episodes`. */
import path from "node:path";
import { readManifest } from "./manifest.ts";
import { dataConfigName, GROUPS_VIEW_SQL } from "./tables.ts";

export interface QueryResult {
  columns: string[];
  /** JSON-safe values: integers beyond 2^53 as decimal text, blobs as base64, times as ISO-8601. */
  rows: Record<string, unknown>[];
}

function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

let duckdbLoaded: Promise<typeof import("@duckdb/node-api")> | undefined;

/** @duckdb/node-api (and its native binding) on first query, not at import: most importers never query. */
export function duckdb(): Promise<typeof import("@duckdb/node-api")> {
  duckdbLoaded ??= import("@duckdb/node-api");
  return duckdbLoaded;
}

/** Runs `sql` with the data set's tables as views. Throws a clear error for a folder without a data set. */
export async function queryDataset(dir: string, sql: string): Promise<QueryResult> {
  const manifest = await readManifest(dir);
  if (!manifest) throw new Error(`${dir}: no manifest.json, not a data set written by 'farm trajectories export --format parquet'`);
  if (manifest.shards.length === 0) throw new Error(`${dir}: the data set has no shards yet`);
  const { DuckDBInstance } = await duckdb();
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    // `steps`, or `trajectories` in the nested layout (data/), and `episodes`.
    for (const table of [dataConfigName(manifest.layout ?? "steps"), "episodes"] as const) {
      const files = manifest.shards.map((s) => path.resolve(dir, table === "episodes" ? s.episodes : s.steps));
      await conn.run(`CREATE VIEW ${table} AS SELECT * FROM read_parquet([${files.map(sqlString).join(", ")}])`);
    }
    await conn.run(GROUPS_VIEW_SQL).catch(() => undefined); // a data set from before groups: no group columns
    const reader = await conn.runAndReadAll(sql);
    return { columns: reader.columnNames(), rows: reader.getRowObjectsJS().map(jsonSafeRow) };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** Integers as numbers when exact (else decimal text), blobs as base64, times as ISO-8601. */
function jsonSafe(v: unknown): unknown {
  if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64");
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (Array.isArray(v)) return v.map(jsonSafe);
  if (v !== null && typeof v === "object") {
    const out = Object.create(null) as Record<string, unknown>;
    for (const [k, x] of Object.entries(v)) out[k] = jsonSafe(x);
    return out;
  }
  return v;
}

export function jsonSafeRow(row: Record<string, unknown>): Record<string, unknown> {
  return jsonSafe(row) as Record<string, unknown>;
}

/** A plain text table: header, rule, rows; cells cut at 60 characters. */
export function formatTable(r: QueryResult): string {
  const cell = (v: unknown) => {
    const s = v === null || v === undefined ? "NULL" : typeof v === "string" ? v : JSON.stringify(v);
    return s.length > 60 ? `${s.slice(0, 57)}...` : s;
  };
  const body = r.rows.map((row) => r.columns.map((c) => cell(row[c])));
  const widths = r.columns.map((c, i) => Math.max(c.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((s, i) => s.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(r.columns), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line), `(${r.rows.length} row${r.rows.length === 1 ? "" : "s"})`].join("\n");
}
