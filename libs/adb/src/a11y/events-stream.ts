/**
 * The device's accessibility events as they happen, from `uiautomator events` over adb shell (AOSP's EventsCommand:
 * one line per AccessibilityEvent until the process is stopped, `MM-dd HH:mm:ss.SSS EventType: TYPE_…; EventTime: …;
 * …`). Only the event type and the arrival time are kept (a settle policy needs to know that the screen changed and
 * when, not what changed). Lines are bounded; the stream ends with `close()`.
 */
import type { Duplex } from "node:stream";
import { underDeadline } from "../client.ts";
import type { DeviceCtx } from "../exec.ts";
import { describeError } from "../result.ts";
import { serviceStream } from "../service-stream.ts";
import type { A11yEventStream } from "../types.ts";

/** The command line (a device shell command). */
export const EVENTS_COMMAND = "uiautomator events";
/** A longer line is cut (an event carries its source's text; the type comes first). */
const MAX_LINE = 64 * 1024;
const EVENT_TYPE = /\bEventType: (TYPE_[A-Z_]+)/;

class ShellA11yEventStream implements A11yEventStream {
  private readonly listeners: Array<(type: string) => void> = [];
  private partial = "";
  private closed = false;
  failed: string | undefined;
  otherLines = 0;

  constructor(
    private readonly stream: Duplex,
    private readonly destroy: () => void,
  ) {
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => this.onData(chunk));
    const ended = (why: string) => {
      if (!this.closed && this.failed === undefined) this.failed = why;
    };
    stream.once("end", () => ended("uiautomator events ended"));
    stream.once("close", () => ended("uiautomator events closed"));
    stream.on("error", (e: Error) => ended(`uiautomator events: ${e.message}`));
  }

  onEvent(listener: (type: string) => void): void {
    this.listeners.push(listener);
  }

  private onData(chunk: string): void {
    let text = this.partial + chunk;
    let nl: number;
    while ((nl = text.indexOf("\n")) >= 0) {
      this.line(text.slice(0, nl));
      text = text.slice(nl + 1);
    }
    this.partial = text.length > MAX_LINE ? text.slice(0, MAX_LINE) : text;
  }

  private line(line: string): void {
    const m = EVENT_TYPE.exec(line.length > MAX_LINE ? line.slice(0, MAX_LINE) : line);
    if (!m) {
      if (line.trim() !== "") this.otherLines++;
      return;
    }
    for (const l of this.listeners) l(m[1]!);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.destroy();
  }
}

/** Starts `uiautomator events` on the device; the stream or why it could not start (within `timeoutMs`). */
export async function openA11yEventStream(ctx: DeviceCtx, timeoutMs: number): Promise<A11yEventStream | { status: "adb_error" | "timeout"; message: string }> {
  const h = serviceStream(ctx.cfg.host, ctx.cfg.port, ctx.serial, `shell:${EVENTS_COMMAND}`);
  try {
    const s = await underDeadline(h, timeoutMs, `opening uiautomator events on '${ctx.serial}'`, () => h.opened);
    return new ShellA11yEventStream(s, () => h.destroy());
  } catch (e) {
    const d = describeError(e, { serial: ctx.serial, host: ctx.cfg.host, port: ctx.cfg.port });
    return { status: d.status === "timeout" ? "timeout" : "adb_error", message: d.message };
  }
}
