/**
 * `logcat`: `-c` (clear), `-b <buf>` (repeatable, comma lists, `all`), `-v <format>`, `-d` (dump and
 * exit), `-t N` / `-T N` (last N, then exit / follow), `-B` (binary v1 records), `-s`, `-e REGEX`,
 * `-m N` (stop after N lines), `--pid=N`, and filter specs such as `AndroidRLTask:V *:S`. Without `-d`/`-t` it streams until the host closes the stream.
 */
import { fail, type CommandContext, type CommandTable } from "./types.ts";
import { LOG_BUFFER_NAMES, type LogBufferName, type LogEntry } from "../system/log-buffer.ts";
import { LogFilter } from "./logcat-filter.ts";
import { LOG_FORMATS, LOG_FORMAT_MODIFIERS, encodeBinaryEntry, formatLogLine, type LogFormat } from "./logcat-format.ts";
import { untilAborted } from "../shell/io.ts";

const DEFAULT_BUFFERS: LogBufferName[] = ["main", "system", "crash"];

interface LogcatOptions {
  clear: boolean;
  dump: boolean;
  binary: boolean;
  tail: number | undefined;
  follow: boolean;
  buffers: Set<LogBufferName>;
  format: LogFormat;
  usec: boolean;
  filter: LogFilter;
  regex: RegExp | undefined;
  maxCount: number | undefined;
  pid: number | undefined;
}

function parseArgs(args: string[], ctx: CommandContext): LogcatOptions | number {
  const o: LogcatOptions = { clear: false, dump: false, binary: false, tail: undefined, follow: true, buffers: new Set(), format: "threadtime", usec: false, filter: new LogFilter(), regex: undefined, maxCount: undefined, pid: undefined };
  const specs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const value = (): string | undefined => args[++i];
    if (a === "-c" || a === "--clear") o.clear = true;
    else if (a === "-d") o.dump = true;
    else if (a === "-B" || a === "--binary") o.binary = true;
    else if (a === "-s") o.filter.silenceByDefault();
    else if (a === "-t" || a === "-T") {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 0) return fail(ctx, `logcat: ${a} needs a line count`);
      o.tail = n;
      if (a === "-t") o.dump = true;
    } else if (a === "-b" || a.startsWith("--buffer")) {
      const v = a.startsWith("--buffer=") ? a.slice(9) : value();
      if (!v) return fail(ctx, "logcat: -b needs a buffer name");
      for (const name of v.split(",")) {
        if (name === "all") LOG_BUFFER_NAMES.forEach((b) => o.buffers.add(b));
        else if (name === "default") DEFAULT_BUFFERS.forEach((b) => o.buffers.add(b));
        else if ((LOG_BUFFER_NAMES as readonly string[]).includes(name)) o.buffers.add(name as LogBufferName);
        else return fail(ctx, `logcat: Unknown buffer '${name}'`);
      }
    } else if (a === "-v" || a.startsWith("--format")) {
      const v = a.startsWith("--format=") ? a.slice(9) : value();
      if (!v) return fail(ctx, "logcat: -v needs a format");
      if (v === "usec") o.usec = true;
      else if (v === "epoch") o.format = "epoch";
      else if (LOG_FORMATS.has(v)) o.format = v === "long" ? "threadtime" : (v as LogFormat);
      else if (!LOG_FORMAT_MODIFIERS.has(v)) return fail(ctx, `logcat: Invalid parameter "${v}" to -v`);
    } else if (a === "-e" || a.startsWith("--regex")) {
      const v = a.startsWith("--regex=") ? a.slice(8) : value();
      try {
        o.regex = new RegExp(v ?? "");
      } catch {
        return fail(ctx, `logcat: invalid regex '${v}'`);
      }
    } else if (a === "-m" || a.startsWith("--max-count")) {
      const n = Number(a.startsWith("--max-count=") ? a.slice(12) : value());
      if (!Number.isInteger(n) || n <= 0) return fail(ctx, "logcat: -m needs a positive count");
      o.maxCount = n;
    } else if (a.startsWith("--pid")) {
      const n = Number(a.startsWith("--pid=") ? a.slice(6) : value());
      if (!Number.isInteger(n)) return fail(ctx, "logcat: --pid needs a number");
      o.pid = n;
    } else if (a.startsWith("-")) {
      return fail(ctx, `logcat: unknown option -- '${a}'`);
    } else specs.push(a);
  }
  for (const s of specs) if (!o.filter.add(s)) return fail(ctx, `logcat: Invalid filter expression '${s}'`);
  if (o.buffers.size === 0) DEFAULT_BUFFERS.forEach((b) => o.buffers.add(b));
  if (o.dump) o.follow = false;
  return o;
}

async function logcat(args: string[], ctx: CommandContext): Promise<number> {
  const o = parseArgs(args, ctx);
  if (typeof o === "number") return o;
  const log = ctx.sys.log;
  if (o.clear) {
    log.clear(o.buffers);
    return 0;
  }
  const wanted = (e: LogEntry): boolean =>
    o.buffers.has(e.buffer) && o.filter.accepts(e.tag, e.priority) && (o.pid === undefined || e.pid === o.pid) && (!o.regex || o.regex.test(e.message));
  let emitted = 0;
  const done = new AbortController();
  const emit = (e: LogEntry): void => {
    if (o.maxCount !== undefined && emitted >= o.maxCount) return;
    ctx.out(o.binary ? encodeBinaryEntry(e) : formatLogLine(e, o.format, o.usec));
    if (++emitted === o.maxCount) done.abort();
  };
  let backlog = log.snapshot().filter(wanted);
  if (o.tail !== undefined) backlog = o.tail === 0 ? [] : backlog.slice(-o.tail);
  if (!o.follow) {
    for (const e of backlog) emit(e);
    return 0;
  }
  // Subscribe before writing the backlog so no entry falls between the two.
  const pending: LogEntry[] = [];
  let live = false;
  const stop = log.follow((e) => {
    if (!wanted(e)) return;
    if (live) emit(e);
    else pending.push(e);
  });
  try {
    for (const e of backlog) emit(e);
    for (const e of pending) emit(e);
    live = true;
    if (!done.signal.aborted) await Promise.race([untilAborted(ctx.signal), untilAborted(done.signal)]);
  } finally {
    stop();
  }
  return 0;
}

const LOG_PRIORITIES: Record<string, LogEntry["priority"]> = { v: "V", d: "D", i: "I", w: "W", e: "E", f: "F" };
/** The pid a `log` line carries (a short-lived toolbox process on a device). */
const LOG_TOOL_PID = 9999;

/** `log [-p v|d|i|w|e|f] [-t TAG] MESSAGE…`: toolbox's log, one line into the main buffer (priority i, tag `log` by default). */
function logTool(args: string[], ctx: CommandContext): number {
  let priority: LogEntry["priority"] = "I";
  let tag = "log";
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === "-t" && i + 1 < args.length) tag = args[++i]!;
    else if (a === "-p" && i + 1 < args.length) {
      const p = args[++i]!.toLowerCase();
      if (!Object.hasOwn(LOG_PRIORITIES, p)) return fail(ctx, `log: invalid priority '${p}'`, 1);
      priority = LOG_PRIORITIES[p]!;
    } else break;
  }
  const message = args.slice(i).join(" ");
  if (message === "") return fail(ctx, "usage: log [-p PRI] [-t TAG] MESSAGE...", 1);
  ctx.sys.log.append({ pid: LOG_TOOL_PID, tid: LOG_TOOL_PID, priority, tag, message });
  return 0;
}

export const logcatCommands: CommandTable = {
  logcat: { latencyClass: "shell", run: logcat },
  log: { latencyClass: "shell", run: logTool },
};
