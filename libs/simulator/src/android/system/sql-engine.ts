/**
 * SQLite for the simulated device: sql.js (SQLite compiled to WebAssembly), loaded once per process when the
 * simulator is imported. Apps keep their databases as real SQLite files in the device's file system (what
 * `adb pull` gives and Python's `sqlite3` opens); the shell's `sqlite3` command reads and writes the same files.
 * A database is opened from the file's bytes, changed, and written back whole (no journal, no -wal file).
 */
import initSqlJs, { type Database, type SqlValue } from "sql.js";

const SQL = await initSqlJs();

export type { Database, SqlValue };

/** An in-memory database holding `bytes` (a SQLite file's content), or a new empty one. Close it after use. */
export function openDatabase(bytes?: Uint8Array): Database {
  return new SQL.Database(bytes && bytes.length > 0 ? bytes : undefined);
}
