/**
 * Read-only SQL over a pulled database, off the event loop: each query runs in a thread (sql-worker.ts) with a
 * deadline; a query past it has its thread terminated (SQLite cannot be interrupted from outside), so no query
 * can hang the worker. Idle threads are kept for the next query (unref'd: they never keep the process alive).
 */
import { Worker } from "node:worker_threads";
import { coerceError } from "@farm/errors";
import { withDeadline } from "@farm/time";

export interface SqlThreadRequest {
  id: number;
  image: Uint8Array;
  query: string;
  params: Record<string, string | number | boolean>;
  rows: "first" | "count";
  maxValueBytes: number;
  heapBytes: number;
}

export type SqlThreadReply = { id: number; ok: true; value: string; rows: number } | { id: number; ok: false; error: string };

const THREAD_URL = new URL("./sql-worker.ts", import.meta.url);
const TSX_API = import.meta.resolve("tsx/esm/api");
/** Threads register tsx themselves (loader hooks are per thread), so the TypeScript body loads under `node --import tsx` and the `farm` command alike. */
const BOOTSTRAP = `
const { workerData } = require("node:worker_threads");
(async () => {
  (await import(workerData.tsx)).register();
  await import(workerData.url);
})();
`;
const MAX_IDLE = 2;

const idle: Worker[] = [];
let nextId = 1;

function spawn(): Worker {
  const w = new Worker(BOOTSTRAP, { eval: true, workerData: { url: THREAD_URL.href, tsx: TSX_API }, resourceLimits: { maxOldGenerationSizeMb: 512 } });
  w.unref();
  return w;
}

/** Runs one query; resolves with the value or an error text, never rejects. */
export async function runSqlQuery(req: Omit<SqlThreadRequest, "id">, timeoutMs: number): Promise<SqlThreadReply> {
  timeoutMs = Math.max(1, Math.round(timeoutMs));
  const id = nextId++;
  const w = idle.pop() ?? spawn();
  const listeners: { message?: (r: SqlThreadReply) => void; error?: (e: Error) => void; exit?: (code: number) => void } = {};
  const reply = new Promise<SqlThreadReply & { broken?: true }>((resolve) => {
    listeners.message = (r) => r.id === id && resolve(r);
    listeners.error = (e) => resolve({ id, ok: false, error: `SQL thread failed: ${e.message}`, broken: true });
    listeners.exit = (code) => resolve({ id, ok: false, error: `SQL thread exited (code ${code})`, broken: true });
  });
  w.on("message", listeners.message!);
  w.on("error", listeners.error!);
  w.on("exit", listeners.exit!);
  let r: SqlThreadReply & { broken?: true };
  try {
    w.postMessage({ ...req, id } satisfies SqlThreadRequest, [req.image.buffer as ArrayBuffer]);
    r = await withDeadline(reply, Math.max(1, timeoutMs), () => new Error(`the query did not finish in ${timeoutMs} ms (stopped)`));
  } catch (e) {
    r = { id, ok: false, error: coerceError(e).message, broken: true };
  }
  w.off("message", listeners.message!);
  w.off("error", listeners.error!);
  w.off("exit", listeners.exit!);
  if (!r.broken && idle.length < MAX_IDLE) idle.push(w);
  else void w.terminate();
  const { broken: _, ...out } = r;
  return out;
}

/** Stops the idle SQL threads (tests, shutdown); queries still running keep theirs until they finish. */
export async function closeSqlThreads(): Promise<void> {
  const ws = idle.splice(0);
  await Promise.all(ws.map((w) => w.terminate()));
}
