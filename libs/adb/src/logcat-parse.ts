/** The `logcat -v epoch` line shape of task-format.md §6.2. */
import type { LogcatRecord } from "./types.ts";

const LINE = /^[ ]+([0-9]+\.[0-9]+)[ ]+([0-9]+)[ ]+([0-9]+)[ ]+(.)[ ]+([^:]*):[ ](.*)$/;

/** One record, or undefined for a line that does not have the shape (those are counted, not fatal). */
export function parseLogcatLine(line: string): LogcatRecord | undefined {
  const m = LINE.exec(line.replace(/[\r\n]+$/, ""));
  if (!m) return undefined;
  return {
    timestampSec: Number(m[1]),
    pid: Number(m[2]),
    tid: Number(m[3]),
    priority: m[4]!,
    tag: m[5]!.trimEnd(),
    message: m[6]!,
  };
}
