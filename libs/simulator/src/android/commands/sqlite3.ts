/**
 * `sqlite3 [-header|-noheader] [-separator SEP] [-list|-csv] DB [SQL…]`: the SQLite shell of a userdebug image,
 * on the device's SQLite files (sql.js, `system/sql-engine.ts`). With SQL arguments each is run in turn; without,
 * the SQL is read from stdin (`sqlite3 DB < file.sql`). Output is the shell's default list mode: a row a line, its
 * values joined by `|` (NULL as an empty string), no header. An error prints `Error: in prepare, <message>` (as
 * sqlite3 3.4x does for its argument) and exits 1; statements before it keep their effect. The file is written
 * back only when the SQL changed the database; a database that does not exist is created on its first change, as
 * sqlite3 creates it lazily. Not modelled: dot-commands other than `.tables`, REAL values' `.0` (printed as
 * JavaScript prints numbers), journals.
 */
import { fail, type CommandContext, type CommandTable } from "./types.ts";
import { bytesToText, readStdin } from "../shell/io.ts";
import { normalizePath } from "../system/file-system.ts";
import { openDatabase, type Database, type SqlValue } from "../system/sql-engine.ts";

/** The largest database file or stdin script this command reads. */
const MAX_BYTES = 64 * 1024 * 1024;
const MAX_SCRIPT_BYTES = 1024 * 1024;
const USAGE = "Usage: sqlite3 [OPTIONS] FILENAME [SQL]\nOPTIONS include:\n   -csv                 set output mode to 'csv'\n   -header              turn headers on\n   -list                set output mode to 'list'\n   -noheader            turn headers off\n   -separator SEP       set output column separator. Default: '|'";

interface Mode {
  header: boolean;
  separator: string;
  csv: boolean;
}

function cell(v: SqlValue, mode: Mode): string {
  if (v === null) return "";
  const text = v instanceof Uint8Array ? bytesToText(v) : String(v);
  return mode.csv && /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function runSql(db: Database, sql: string, mode: Mode, ctx: CommandContext): boolean {
  const trimmed = sql.trim();
  if (trimmed === ".tables") {
    const r = db.exec("SELECT name FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' ORDER BY name");
    const names = (r[0]?.values ?? []).map((row) => String(row[0]));
    if (names.length > 0) ctx.out(names.join("  ") + "\n");
    return true;
  }
  if (trimmed.startsWith(".")) {
    ctx.err(`Error: unknown command or invalid arguments:  "${trimmed.slice(1).split(/\s/)[0]}". Enter ".help" for help\n`);
    return false;
  }
  try {
    for (const stmt of db.iterateStatements(sql)) {
      try {
        let first = true;
        while (stmt.step()) {
          if (first && mode.header) ctx.out(stmt.getColumnNames().join(mode.separator) + "\n");
          first = false;
          ctx.out(stmt.get().map((v) => cell(v, mode)).join(mode.separator) + "\n");
        }
      } finally {
        stmt.free();
      }
    }
    return true;
  } catch (e) {
    ctx.err(`Error: in prepare, ${e instanceof Error ? e.message : String(e)}\n`);
    return false;
  }
}

async function sqlite3(args: string[], ctx: CommandContext): Promise<number> {
  const mode: Mode = { header: false, separator: "|", csv: false };
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (rest.length > 0 || !a.startsWith("-")) rest.push(a);
    else if (a === "-header" || a === "--header") mode.header = true;
    else if (a === "-noheader" || a === "--noheader") mode.header = false;
    else if (a === "-list" || a === "--list") Object.assign(mode, { csv: false, separator: "|" });
    else if (a === "-csv" || a === "--csv") Object.assign(mode, { csv: true, separator: "," });
    else if ((a === "-separator" || a === "--separator") && args[i + 1] !== undefined) mode.separator = args[++i]!;
    else return fail(ctx, `sqlite3: Error: unknown option: ${a}\nUse -help for a list of options.`, 1);
  }
  const [file, ...sqls] = rest;
  if (file === undefined) return fail(ctx, USAGE, 1);
  const path = normalizePath(file.startsWith("/") ? file : `/${file}`);
  const fs = ctx.sys.fs;
  if (fs.isDirectory(path)) return fail(ctx, `Error: unable to open database "${file}": unable to open database file`, 1);
  const before = fs.read(path);
  if (before && before.length > MAX_BYTES) return fail(ctx, `Error: unable to open database "${file}": file is larger than ${MAX_BYTES} bytes`, 1);
  let db: Database;
  try {
    db = openDatabase(before);
    db.exec("SELECT count(*) FROM sqlite_master"); // a file that is not a database fails here, as sqlite3 does on first use
  } catch (e) {
    return fail(ctx, `Error: in prepare, ${e instanceof Error ? e.message : String(e)}`, 1);
  }
  try {
    let ok = true;
    if (sqls.length === 0) {
      const script = await readStdin(ctx.stdin, ctx.signal, MAX_SCRIPT_BYTES);
      const text = bytesToText(script);
      // Dot-commands are lines of their own; the rest is SQL.
      let sql = "";
      for (const line of text.split("\n")) {
        if (line.trim().startsWith(".") && sql.trim() === "") ok = runSql(db, line, mode, ctx) && ok;
        else sql += line + "\n";
      }
      if (sql.trim() !== "") ok = runSql(db, sql, mode, ctx) && ok;
    } else {
      for (const sql of sqls) {
        ok = runSql(db, sql, mode, ctx);
        if (!ok) break;
      }
    }
    const after = db.export();
    const changed = before ? !sameBytes(before, after) : (db.exec("SELECT count(*) FROM sqlite_master")[0]?.values[0]?.[0] ?? 0) !== 0;
    if (changed) fs.write(path, after, 0o660, Math.floor(ctx.sys.now() / 1000));
    return ok ? 0 : 1;
  } finally {
    db.close();
  }
}

export const sqlite3Commands: CommandTable = {
  sqlite3: { latencyClass: "shell", run: sqlite3 },
};
