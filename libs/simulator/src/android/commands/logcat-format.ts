/** Logcat output shapes: text formats (`-v epoch`, `threadtime`, `brief`, …) and binary logger_entry v1 (`-B`). */
import type { LogEntry, LogPriority } from "../system/log-buffer.ts";

export type LogFormat = "threadtime" | "epoch" | "brief" | "time" | "tag" | "process" | "thread" | "raw";
export const LOG_FORMATS = new Set<string>(["threadtime", "epoch", "brief", "time", "tag", "process", "thread", "raw", "long"]);
/** `-v` modifiers accepted and (except `usec`) ignored. */
export const LOG_FORMAT_MODIFIERS = new Set<string>(["color", "descriptive", "epoch", "monotonic", "printable", "uid", "usec", "UTC", "year", "zone", "nsec"]);

const PRIORITY_NUMBER: Record<LogPriority, number> = { V: 2, D: 3, I: 4, W: 5, E: 6, F: 7 };

function pad2(n: number): string {
  return String(n).padStart(2, "0");
}

function fraction(timeMs: number, usec: boolean): string {
  const ms = ((timeMs % 1000) + 1000) % 1000;
  return usec ? String(Math.floor(ms * 1000)).padStart(6, "0") : String(Math.floor(ms)).padStart(3, "0");
}

function wallClock(timeMs: number, usec: boolean): string {
  const d = new Date(timeMs);
  return `${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}.${fraction(timeMs, usec)}`;
}

/**
 * One text line (with `\n`). `-v epoch` gives e.g. `  1700000000.123  1234  1240 I AndroidRLTask: score: 4`,
 * which the runtime's regex in task-format.md §6.2 parses (tags shorter than 8 are padded, as real logcat does).
 */
export function formatLogLine(e: LogEntry, format: LogFormat, usec = false): string {
  const tag = e.tag.padEnd(8);
  switch (format) {
    case "epoch": {
      const stamp = `${Math.floor(e.timeMs / 1000)}.${fraction(e.timeMs, usec)}`;
      return `${stamp.padStart(16)} ${String(e.pid).padStart(5)} ${String(e.tid).padStart(5)} ${e.priority} ${tag}: ${e.message}\n`;
    }
    case "brief":
      return `${e.priority}/${tag}(${String(e.pid).padStart(5)}): ${e.message}\n`;
    case "time":
      return `${wallClock(e.timeMs, usec)} ${e.priority}/${tag}(${String(e.pid).padStart(5)}): ${e.message}\n`;
    case "tag":
      return `${e.priority}/${tag}: ${e.message}\n`;
    case "process":
      return `${e.priority}(${String(e.pid).padStart(5)}) ${e.message}  (${e.tag})\n`;
    case "thread":
      return `${e.priority}(${String(e.pid).padStart(5)}:${String(e.tid).padStart(5)}) ${e.message}\n`;
    case "raw":
      return `${e.message}\n`;
    case "threadtime":
      return `${wallClock(e.timeMs, usec)} ${String(e.pid).padStart(5)} ${String(e.tid).padStart(5)} ${e.priority} ${tag}: ${e.message}\n`;
  }
}

const encoder = new TextEncoder();

/** A logger_entry v1 record: 20-byte header (len, hdr_size 0, pid, tid, sec, nsec) + prio, tag\0, message\0. */
export function encodeBinaryEntry(e: LogEntry): Uint8Array {
  const tag = encoder.encode(e.tag);
  const msg = encoder.encode(e.message);
  const payloadLen = 1 + tag.length + 1 + msg.length + 1;
  const out = new Uint8Array(20 + payloadLen);
  const view = new DataView(out.buffer);
  view.setUint16(0, payloadLen, true);
  view.setUint16(2, 0, true);
  view.setInt32(4, e.pid, true);
  view.setInt32(8, e.tid, true);
  view.setInt32(12, Math.floor(e.timeMs / 1000), true);
  view.setInt32(16, Math.round((((e.timeMs % 1000) + 1000) % 1000) * 1e6), true);
  out[20] = PRIORITY_NUMBER[e.priority];
  out.set(tag, 21);
  out.set(msg, 22 + tag.length);
  return out;
}
