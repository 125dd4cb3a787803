/**
 * The sources of FAMILIES.md "Checks": each reads one thing from the episode's device through `DeviceCalls`
 * (bounded, timed) and gives the value to compare, or why it could not be read (`error`: the check cannot run).
 */
import { isScreenTree, type A11yNodeInfo } from "@farm/adb";
import { shQuote } from "@farm/shell-words";
import type { CheckSource, TaskParams } from "@farm/task";
import { regexSearch } from "./compare.ts";
import type { ScoreLimits } from "./limits.ts";
import { renderShell, renderText } from "./render.ts";
import { databaseImage } from "./sqlite-files.ts";
import { runSqlQuery } from "./sql-thread.ts";
import type { DeviceCalls } from "./types.ts";

export type SourceValue = { value: string; exists?: boolean } | { error: string };

export interface SourceContext {
  device: DeviceCalls;
  params: TaskParams;
  answer: string | undefined;
  limits: ScoreLimits;
  /** Milliseconds left for this check (each device call gets at most this). */
  left(): number;
}

const ABSENT = "__farm_absent__";

/** Output text cut to the read bound (a command may print more; the driver bounds what it collects). */
function bounded(s: string, limits: ScoreLimits): string {
  return s.length > limits.maxReadBytes ? s.slice(0, limits.maxReadBytes) : s;
}

async function shellValue(ctx: SourceContext, commandLine: string, what: string): Promise<{ stdout: string } | { error: string }> {
  const r = await ctx.device.shell(commandLine, { timeoutMs: Math.max(1, ctx.left()) });
  if (r.status !== "ok") return { error: `${what}: ${r.status}: ${r.message}` };
  return { stdout: r.stdout };
}

/** The size of a regular file on the device, or undefined when there is none. */
async function fileSize(ctx: SourceContext, path: string): Promise<{ size?: number } | { error: string }> {
  const q = shQuote(path);
  const r = await shellValue(ctx, `[ -f ${q} ] && wc -c < ${q} || echo ${ABSENT}`, `size of ${path}`);
  if ("error" in r) return r;
  const last = r.stdout.trim().split(/\s+/).pop() ?? "";
  if (last === ABSENT) return {};
  if (!/^\d+$/.test(last)) return { error: `size of ${path}: unexpected answer ${JSON.stringify(r.stdout.slice(0, 200))}` };
  return { size: Number(last) };
}

async function pull(ctx: SourceContext, path: string): Promise<{ bytes: Uint8Array } | { error: string }> {
  const r = await ctx.device.execute({ timeoutSec: 0, cmd: { command: "pull", path } }, { timeoutMs: Math.max(1, ctx.left()) });
  if (r.status !== "ok") return { error: `pull ${path}: ${r.status}: ${r.message}` };
  if (r.data?.kind !== "pull") return { error: `pull ${path}: no content in the answer` };
  return { bytes: r.data.content };
}

/** A file's content (at most `maxReadBytes`), or its existence alone. */
async function readFile(ctx: SourceContext, path: string, existenceOnly: boolean): Promise<SourceValue> {
  const sz = await fileSize(ctx, path);
  if ("error" in sz) return sz;
  if (sz.size === undefined) return existenceOnly ? { value: "", exists: false } : { error: `no file at ${path}` };
  if (existenceOnly) return { value: `${sz.size} bytes`, exists: true };
  if (sz.size > ctx.limits.maxReadBytes) return { error: `${path} is ${sz.size} bytes, over the ${ctx.limits.maxReadBytes}-byte read bound of a file check` };
  const p = await pull(ctx, path);
  if ("error" in p) return p;
  return { value: bounded(new TextDecoder().decode(p.bytes.subarray(0, ctx.limits.maxReadBytes)), ctx.limits), exists: true };
}

async function readSql(ctx: SourceContext, src: Extract<CheckSource, { kind: "sql" }>): Promise<SourceValue> {
  const db = renderText(src.db, ctx.params);
  const files: { main?: Uint8Array; wal?: Uint8Array; journal?: Uint8Array } = {};
  let total = 0;
  for (const [key, path] of [["main", db], ["wal", `${db}-wal`], ["journal", `${db}-journal`]] as const) {
    const sz = await fileSize(ctx, path);
    if ("error" in sz) return sz;
    if (sz.size === undefined) {
      if (key === "main") return { error: `no database at ${db}` };
      continue;
    }
    total += sz.size;
    if (total > ctx.limits.maxDbBytes) return { error: `${db} (with its -wal/-journal) is over the ${ctx.limits.maxDbBytes}-byte bound of a sql check` };
    if (sz.size === 0 && key !== "main") continue;
    const p = await pull(ctx, path);
    if ("error" in p) return p;
    files[key] = p.bytes;
  }
  const image = databaseImage(files.main!, { ...(files.wal ? { wal: files.wal } : {}), ...(files.journal ? { journal: files.journal } : {}) });
  if (!image) return { error: `${db} is not a SQLite database (${files.main!.length} bytes)` };
  const r = await runSqlQuery(
    { image, query: src.query, params: { ...ctx.params }, rows: src.rows, maxValueBytes: ctx.limits.maxReadBytes, heapBytes: ctx.limits.sqlHeapBytes },
    Math.max(1, ctx.left()),
  );
  if (!r.ok) return { error: `query on ${db}: ${r.error}` };
  return { value: r.value };
}

function nodeMatches(n: A11yNodeInfo, src: Extract<CheckSource, { kind: "tree" }>, want: { text?: string; resourceId?: string; className?: string }): boolean {
  if (want.text !== undefined && n.text !== want.text && n.contentDescription !== want.text) return false;
  if (src.textRegex && !regexSearch(src.textRegex, n.text) && !regexSearch(src.textRegex, n.contentDescription)) return false;
  if (want.resourceId !== undefined && n.viewIdResourceName !== want.resourceId && !n.viewIdResourceName.endsWith(`:id/${want.resourceId}`)) return false;
  if (want.className !== undefined && n.className !== want.className) return false;
  if (src.checked !== undefined && n.isChecked !== src.checked) return false;
  if (src.selected !== undefined && n.isSelected !== src.selected) return false;
  if (src.enabled !== undefined && n.isEnabled !== src.enabled) return false;
  return true;
}

/** The number of nodes with all the given properties (the value), and whether there is one (`exists`). */
async function readTree(ctx: SourceContext, src: Extract<CheckSource, { kind: "tree" }>): Promise<SourceValue> {
  const t = await ctx.device.screenTree();
  if (!isScreenTree(t)) return { error: `screen tree: ${t.outcome}: ${t.message}` };
  const want = {
    ...(src.text ? { text: renderText(src.text, ctx.params) } : {}),
    ...(src.resourceId ? { resourceId: renderText(src.resourceId, ctx.params) } : {}),
    ...(src.className ? { className: renderText(src.className, ctx.params) } : {}),
  };
  let count = 0;
  let first: A11yNodeInfo | undefined;
  for (const w of t.windows)
    for (const n of w.tree.nodes)
      if (nodeMatches(n, src, want)) {
        count++;
        first ??= n;
      }
  const seen = first ? `: ${first.className}${first.viewIdResourceName ? ` ${first.viewIdResourceName}` : ""} ${JSON.stringify(first.text || first.contentDescription)}` : "";
  return { value: `${count} matching node${count === 1 ? "" : "s"}${seen}`, exists: count > 0 };
}

/** Reads the check's source. Throws only for a template that names no parameter (the caller turns it into the check's error). */
export async function readSource(ctx: SourceContext, src: CheckSource, existenceOnly: boolean): Promise<SourceValue> {
  switch (src.kind) {
    case "shell": {
      const r = await shellValue(ctx, renderShell(src.command, ctx.params), "shell");
      return "error" in r ? r : { value: bounded(r.stdout, ctx.limits).trim() };
    }
    case "setting": {
      const key = renderText(src.key, ctx.params);
      const r = await ctx.device.execute({ timeoutSec: 0, cmd: { command: "settings", namespace: src.namespace, action: { verb: "get", key } } }, { timeoutMs: Math.max(1, ctx.left()) });
      if (r.status !== "ok") return { error: `settings get ${src.namespace} ${key}: ${r.status}: ${r.message}` };
      return { value: bounded(r.output, ctx.limits).trim() };
    }
    case "file":
      return readFile(ctx, renderText(src.path, ctx.params), existenceOnly);
    case "sql":
      return readSql(ctx, src);
    case "tree":
      return readTree(ctx, src);
    case "activity": {
      const r = await ctx.device.execute({ timeoutSec: 0, cmd: { command: "get_current_activity" } }, { timeoutMs: Math.max(1, ctx.left()) });
      if (r.status !== "ok") return { error: `get_current_activity: ${r.status}: ${r.message}` };
      return { value: r.data?.kind === "current_activity" ? r.data.fullActivity : r.output.trim() };
    }
    case "answer":
      return { value: bounded(ctx.answer ?? "", ctx.limits) };
  }
}
