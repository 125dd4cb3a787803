/**
 * The body of a SQL thread (sql-thread.ts): opens a database image from memory with sql.js and runs one read-only
 * query per request, off the event loop (a runaway query is stopped by terminating the thread). The query must
 * be one SELECT / WITH / VALUES statement; `PRAGMA query_only` refuses writes, `hard_heap_limit` bounds memory.
 */
import { parentPort } from "node:worker_threads";
import initSqlJs from "sql.js";
import type { SqlThreadReply, SqlThreadRequest } from "./sql-thread.ts";

const ready = initSqlJs();

function statementKind(sql: string): string {
  // Leading comments and parentheses are not the statement's first word.
  const s = sql.replace(/^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/|\()*/, "");
  return (/^[A-Za-z]+/.exec(s)?.[0] ?? "").toUpperCase();
}

function cell(v: unknown, maxBytes: number): string {
  if (v === null || v === undefined) return "null";
  if (v instanceof Uint8Array) return Buffer.from(v.subarray(0, maxBytes >> 1)).toString("hex");
  const s = String(v);
  return s.length > maxBytes ? s.slice(0, maxBytes) : s;
}

async function run(req: SqlThreadRequest): Promise<SqlThreadReply> {
  const SQL = await ready;
  let db: import("sql.js").Database | undefined;
  try {
    db = new SQL.Database(req.image);
    db.run(`PRAGMA hard_heap_limit=${Math.floor(req.heapBytes)}`);
    db.run("PRAGMA query_only=1");
    const it = db.iterateStatements(req.query);
    const first = it.next();
    if (first.done) return { id: req.id, ok: false, error: "the query holds no statement" };
    const stmt = first.value;
    try {
      const kind = statementKind(stmt.getSQL());
      if (kind !== "SELECT" && kind !== "WITH" && kind !== "VALUES") return { id: req.id, ok: false, error: `only a SELECT (or WITH … SELECT) is allowed, not ${kind || "this statement"}` };
      if (it.getRemainingSQL().replace(/\s+|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/|;/g, "") !== "") return { id: req.id, ok: false, error: "one statement only (the query goes on after its first ;)" };
      const bind: Record<string, number | string> = {};
      for (const [k, v] of Object.entries(req.params)) bind[`:${k}`] = typeof v === "boolean" ? (v ? 1 : 0) : v;
      stmt.bind(bind);
      if (req.rows === "count") {
        let n = 0;
        while (stmt.step()) n++;
        return { id: req.id, ok: true, value: String(n), rows: n };
      }
      if (!stmt.step()) return { id: req.id, ok: true, value: "", rows: 0 };
      const row = stmt.get();
      return { id: req.id, ok: true, value: row.length ? cell(row[0], req.maxValueBytes) : "", rows: 1 };
    } finally {
      stmt.free();
    }
  } catch (e) {
    return { id: req.id, ok: false, error: e instanceof Error ? e.message : String(e) };
  } finally {
    try {
      db?.close();
    } catch {
      /* closing a broken database */
    }
  }
}

parentPort!.on("message", (req: SqlThreadRequest) => {
  void run(req).then((r) => parentPort!.postMessage(r));
});
