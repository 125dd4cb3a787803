/**
 * One DuckDB connection over a data set, kept open for several queries (the viewer, the report): views
 * `steps` (or `trajectories`) and `episodes`, as `farm trajectories query` makes them.
 */
import path from "node:path";
import type { DuckDBConnection, DuckDBValue } from "@duckdb/node-api";
import { FarmError } from "@farm/errors";
import { readManifest, type Manifest } from "./manifest.ts";
import { duckdb, jsonSafeRow } from "./query.ts";
import { dataConfigName, GROUPS_VIEW_SQL } from "./tables.ts";

export type DatasetReadErrorCode = "not_a_dataset" | "empty_dataset" | "unsupported_layout";

export class DatasetReadError extends FarmError<DatasetReadErrorCode> {
  constructor(code: DatasetReadErrorCode, message: string) {
    super(code, message, { retryable: false });
    this.name = "DatasetReadError";
  }
}

export function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

export interface DatasetDb {
  dir: string;
  manifest: Manifest;
  /** Column names of a view. */
  columns(table: string): Promise<Set<string>>;
  /** JSON-safe rows (as `farm trajectories query --json` prints them). */
  rows(sql: string, values?: DuckDBValue[]): Promise<Record<string, unknown>[]>;
  /** Raw values (blobs stay bytes). */
  raw(sql: string, values?: DuckDBValue[]): Promise<Record<string, unknown>[]>;
  close(): void;
}

/** Opens the data set in `dir` (a folder written by `farm trajectories export --format parquet`). */
export async function openDatasetDb(dir: string): Promise<DatasetDb> {
  const manifest = await readManifest(dir);
  if (!manifest) throw new DatasetReadError("not_a_dataset", `${dir}: no manifest.json, not a data set written by 'farm trajectories export --format parquet'`);
  if (manifest.shards.length === 0) throw new DatasetReadError("empty_dataset", `${dir}: the data set has no shards yet`);
  const { DuckDBInstance } = await duckdb();
  const instance = await DuckDBInstance.create(":memory:");
  let conn: DuckDBConnection | undefined;
  try {
    conn = await instance.connect();
    for (const table of [dataConfigName(manifest.layout ?? "steps"), "episodes"] as const) {
      const files = manifest.shards.map((s) => path.resolve(dir, table === "episodes" ? s.episodes : s.steps));
      await conn.run(`CREATE VIEW ${table} AS SELECT * FROM read_parquet([${files.map(sqlString).join(", ")}])`);
    }
    await conn.run(GROUPS_VIEW_SQL).catch(() => undefined); // a data set from before groups: no group columns
  } catch (e) {
    conn?.closeSync();
    instance.closeSync();
    throw e;
  }
  const c = conn;
  const columnCache = new Map<string, Set<string>>();
  let closed = false;
  const raw = async (sql: string, values?: DuckDBValue[]) => (await c.runAndReadAll(sql, values)).getRowObjectsJS() as Record<string, unknown>[];
  return {
    dir,
    manifest,
    async columns(table) {
      let s = columnCache.get(table);
      if (!s) {
        s = new Set((await raw(`SELECT column_name FROM (DESCRIBE ${table})`)).map((r) => String(r.column_name)));
        columnCache.set(table, s);
      }
      return s;
    },
    raw,
    async rows(sql, values) {
      return (await raw(sql, values)).map(jsonSafeRow);
    },
    close() {
      if (closed) return;
      closed = true;
      c.closeSync();
      instance.closeSync();
    },
  };
}
