/**
 * Text logcat (`logcat -v epoch <filters> *:S` through `shell:`), parsed line by line (§6.2). When the
 * stream ends while still wanted (device dropped, adb transport reset) it reopens itself with bounded
 * attempts and backoff (`state: "reconnecting"`), skipping records it already delivered; past the
 * budget it turns `failed` and tells its listeners.
 */
import type { Duplex } from "node:stream";
import { underDeadline } from "./client.ts";
import { serviceStream } from "./service-stream.ts";
import { report, shellExec, type DeviceCtx } from "./exec.ts";
import { parseLogcatLine } from "./logcat-parse.ts";
import { shJoin } from "@farm/shell-words";
import { describeError } from "./result.ts";
import type { LogcatOptions, LogcatRecord, LogcatStream } from "./types.ts";

const FILTER = /^[^\s:]+:[VDIWEFS*]$/;

export function logcatCommandLine(filters: readonly string[]): string {
  return shJoin(["logcat", "-v", "epoch", ...filters, "*:S"]);
}

export class ShellLogcatStream implements LogcatStream {
  private _state: LogcatStream["state"] = "reconnecting";
  private _malformed = 0;
  private readonly recordListeners: Array<(r: LogcatRecord) => void> = [];
  private readonly failedListeners: Array<(reason: string) => void> = [];
  private failReason = "";
  private destroy: (() => void) | undefined;
  private stream: Duplex | undefined;
  private partial = "";
  /** Dedupe after a reopen: the newest timestamp delivered and the lines delivered at that timestamp. */
  private lastTs = -Infinity;
  private atLastTs = new Set<string>();
  private replaying = false;
  private reopenTimer: NodeJS.Timeout | undefined;
  /** Number of times the stream was reopened after an end. */
  reconnects = 0;

  private constructor(
    private readonly ctx: DeviceCtx,
    private readonly opts: LogcatOptions,
  ) {}

  /** Opens the stream (clearing the buffers first when asked). Trouble is reported through `state`/`onFailed`, never thrown. */
  static async open(ctx: DeviceCtx, opts: LogcatOptions): Promise<ShellLogcatStream> {
    const t0 = performance.now();
    const s = await ShellLogcatStream.openQuiet(ctx, opts);
    report(ctx, "logcat_open", s.state === "open" ? "ok" : "adb_error", performance.now() - t0, s.failure);
    return s;
  }

  private static async openQuiet(ctx: DeviceCtx, opts: LogcatOptions): Promise<ShellLogcatStream> {
    const s = new ShellLogcatStream(ctx, opts);
    const bad = opts.filters.find((f) => !FILTER.test(f));
    if (bad !== undefined) {
      s.fail(`invalid logcat filter spec ${JSON.stringify(bad)} (expected TAG:LEVEL)`);
      return s;
    }
    if (opts.clear) {
      const c = await shellExec(ctx, "logcat -b all -c", ctx.cfg.queryTimeoutMs, "logcat:clear");
      if (c.status !== "ok") {
        s.fail(`logcat -b all -c failed: ${c.message}`);
        return s;
      }
    }
    const err = await s.connect();
    if (err) s.fail(`could not start logcat: ${err}`);
    return s;
  }

  get state(): LogcatStream["state"] {
    return this._state;
  }
  get malformedLines(): number {
    return this._malformed;
  }
  /** Why the stream failed ("" unless `state` is failed). */
  get failure(): string {
    return this.failReason;
  }

  onRecord(listener: (rec: LogcatRecord) => void): void {
    this.recordListeners.push(listener);
  }

  onFailed(listener: (reason: string) => void): void {
    if (this._state === "failed") queueMicrotask(() => listener(this.failReason));
    else this.failedListeners.push(listener);
  }

  async close(): Promise<void> {
    if (this._state === "closed") return;
    this._state = "closed";
    if (this.reopenTimer) clearTimeout(this.reopenTimer);
    this.dropStream();
  }

  /** Clears the device's log buffers now (`logcat -b all -c`); the stream keeps running. */
  async clear(): Promise<boolean> {
    const c = await shellExec(this.ctx, "logcat -b all -c", this.ctx.cfg.queryTimeoutMs, "logcat:clear");
    report(this.ctx, "logcat_clear", c.status, c.durationMs, c.message);
    return c.status === "ok";
  }

  /** One attempt to open the shell stream; returns an error message or undefined. */
  private async connect(): Promise<string | undefined> {
    const h = serviceStream(this.ctx.cfg.host, this.ctx.cfg.port, this.ctx.serial, `shell:${logcatCommandLine(this.opts.filters)}`);
    try {
      const s = await underDeadline(h, this.ctx.cfg.queryTimeoutMs, `opening logcat on '${this.ctx.serial}'`, () => h.opened);
      if (this._state === "closed") {
        h.destroy();
        return undefined;
      }
      this.attach(s, () => h.destroy());
      this._state = "open";
      return undefined;
    } catch (e) {
      return describeError(e, { serial: this.ctx.serial, host: this.ctx.cfg.host, port: this.ctx.cfg.port }).message;
    }
  }

  private attach(s: Duplex, destroy: () => void): void {
    this.stream = s;
    this.destroy = destroy;
    this.partial = "";
    s.setEncoding("utf8");
    s.on("data", (chunk: string) => this.onData(chunk));
    const ended = () => {
      if (this.stream !== s) return;
      this.dropStream();
      if (this._state === "open") this.scheduleReopen(1);
    };
    s.once("end", ended);
    s.once("close", ended);
    s.on("error", ended);
  }

  private dropStream(): void {
    const d = this.destroy;
    this.stream = undefined;
    this.destroy = undefined;
    d?.();
  }

  private onData(chunk: string): void {
    const text = this.partial + chunk;
    const lines = text.split("\n");
    this.partial = lines.pop() ?? "";
    for (const line of lines) this.onLine(line);
  }

  private onLine(raw: string): void {
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "" || line.startsWith("--------- beginning of")) return;
    const rec = parseLogcatLine(line);
    if (!rec) {
      this._malformed++;
      return;
    }
    if (this.replaying) {
      // A reopened `logcat` prints the device's buffer again: skip what was already delivered, up to
      // the first record newer than the last one delivered; from there on deliver everything.
      if (rec.timestampSec < this.lastTs) return;
      if (rec.timestampSec === this.lastTs && this.atLastTs.has(line)) return;
      this.replaying = false;
    }
    if (rec.timestampSec === this.lastTs) this.atLastTs.add(line);
    else {
      this.lastTs = rec.timestampSec;
      this.atLastTs = new Set([line]);
    }
    for (const l of this.recordListeners) {
      try {
        l(rec);
      } catch (e) {
        this.ctx.cfg.logger.error({ event: "logcat:listener-error", serial: this.ctx.serial, err: String(e) }, "logcat listener threw");
      }
    }
  }

  private scheduleReopen(attempt: number): void {
    const budget = this.ctx.cfg.logcatReopenAttempts;
    if (attempt > budget) {
      this.fail(`logcat stream on '${this.ctx.serial}' ended and ${budget} reopen attempts failed`);
      return;
    }
    this._state = "reconnecting";
    const delay = Math.min(2000, this.ctx.cfg.logcatReopenBackoffMs * 2 ** (attempt - 1));
    this.reopenTimer = setTimeout(() => {
      this.reopenTimer = undefined;
      if (this._state !== "reconnecting") return;
      const t0 = performance.now();
      void this.connect().then((err) => {
        report(this.ctx, "logcat_reopen", err ? "adb_error" : "ok", performance.now() - t0, err ?? "");
        if (this._state !== "reconnecting" && this._state !== "open") return;
        if (err) this.scheduleReopen(attempt + 1);
        else {
          this.reconnects++;
          this.replaying = true;
          this.ctx.cfg.logger.info({ event: "logcat:reopened", serial: this.ctx.serial, attempt }, "logcat stream reopened");
        }
      });
    }, delay);
  }

  private fail(reason: string): void {
    if (this._state === "closed" || this._state === "failed") return;
    this._state = "failed";
    this.failReason = reason;
    this.dropStream();
    this.ctx.cfg.logger.warn({ event: "logcat:failed", serial: this.ctx.serial, reason }, "logcat stream failed");
    for (const l of this.failedListeners.splice(0)) {
      try {
        l(reason);
      } catch {
        // listeners must not break the stream's bookkeeping
      }
    }
  }
}
