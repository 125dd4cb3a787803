/**
 * The action channel over one persistent legacy `shell:` stream per device: one command line per
 * action followed by an end marker (`…; echo <marker>`), resolved when the marker line comes back.
 * Actions are serialised per channel; each has a deadline; after a failure the stream is destroyed
 * and the next action opens a new one. Callers see only `ActionChannel`, so a faster transport
 * (the emulator's gRPC) can replace this one without touching them (see `actionChannelFactory`).
 */
import type { Duplex } from "node:stream";
import { underDeadline } from "./client.ts";
import { serviceStream } from "./service-stream.ts";
import { report, type DeviceCtx } from "./exec.ts";
import { describeError } from "./result.ts";
import type { ActionChannel, StepResult, StepStatus } from "./types.ts";
import { checkInputText, keyEventsProblem } from "./validate.ts";
import { inputTextLine, inputTextPieces } from "./quote.ts";
import { isKeyCodeText, keyCodeOf } from "@farm/key-codes";
import { orTimeout } from "@farm/time";

const MARK = "__FARM_ACK_";

interface Pending {
  marker: string;
  out: string[];
  resolve(r: { status: StepStatus; message: string; output: string }): void;
}

function coord(v: number): string | undefined {
  return Number.isFinite(v) && v >= 0 ? String(Math.trunc(v)) : undefined;
}

export class ShellActionChannel implements ActionChannel {
  private stream: Duplex | undefined;
  private destroyStream: (() => void) | undefined;
  private opening: Promise<void> | undefined;
  private pending: Pending | undefined;
  private partial = "";
  private seq = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly ctx: DeviceCtx) {}

  /** Opens the stream now (optional: the first action opens it too). */
  async open(): Promise<StepResult> {
    const t0 = performance.now();
    try {
      await this.ensureOpen(this.ctx.cfg.actionTimeoutMs);
      return { status: "ok", message: "", output: "", durationMs: performance.now() - t0 };
    } catch (e) {
      const d = describeError(e, { serial: this.ctx.serial, host: this.ctx.cfg.host, port: this.ctx.cfg.port });
      return { status: d.status, message: `action channel: ${d.message}`, output: "", durationMs: performance.now() - t0 };
    }
  }

  touchDown(x: number, y: number): Promise<StepResult> {
    return this.point("touch", "input motionevent DOWN", x, y);
  }
  touchMove(x: number, y: number): Promise<StepResult> {
    return this.point("touch", "input motionevent MOVE", x, y);
  }
  touchUp(x: number, y: number): Promise<StepResult> {
    return this.point("touch", "input motionevent UP", x, y);
  }
  tap(x: number, y: number): Promise<StepResult> {
    return this.point("tap", "input tap", x, y);
  }
  swipe(x1: number, y1: number, x2: number, y2: number, durationMs: number): Promise<StepResult> {
    const c = [x1, y1, x2, y2].map(coord);
    const d = coord(durationMs);
    if (c.some((v) => v === undefined) || d === undefined) return Promise.resolve(this.bad("swipe", `swipe: coordinates and duration must be non-negative numbers, got (${x1}, ${y1}) → (${x2}, ${y2}) in ${durationMs} ms`));
    // A swipe takes its own duration on the device; give it that on top of the action deadline.
    return this.run("swipe", `input swipe ${c.join(" ")} ${d}`, this.ctx.cfg.actionTimeoutMs + Number(d));
  }
  keyEvent(keycode: string): Promise<StepResult> {
    if (!isKeyCodeText(keycode)) return Promise.resolve(this.bad("key", `keyEvent: invalid keycode ${JSON.stringify(keycode)} (expected KEYCODE_… or a number)`));
    return this.run("key", `input keyevent ${keycode}`, this.ctx.cfg.actionTimeoutMs);
  }
  keyEvents(keycodes: readonly string[]): Promise<StepResult> {
    const bad = keyEventsProblem(keycodes);
    if (bad) return Promise.resolve(this.bad("keys", bad));
    // Numbers, not names: 512 DELs are a 1.5 KB line, well inside a terminal line.
    return this.run("keys", `input keyevent ${keycodes.map((k) => String(keyCodeOf(k) ?? k)).join(" ")}`, this.ctx.cfg.actionTimeoutMs);
  }
  /** `input text` lines of at most 1 KB (a terminal line of the device's shell is bounded), one after another in one turn. */
  text(text: string): Promise<StepResult> {
    const bad = checkInputText(text);
    if (bad) return Promise.resolve(this.bad("text", bad));
    return this.run("text", inputTextPieces(text).map(inputTextLine), this.ctx.cfg.actionTimeoutMs);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.queue.catch(() => undefined);
    this.teardown("action channel closed");
  }

  private point(op: string, prefix: string, x: number, y: number): Promise<StepResult> {
    const cx = coord(x);
    const cy = coord(y);
    if (cx === undefined || cy === undefined) return Promise.resolve(this.bad(op, `${op}: coordinates must be non-negative numbers, got (${x}, ${y})`));
    return this.run(op, `${prefix} ${cx} ${cy}`, this.ctx.cfg.actionTimeoutMs);
  }

  private bad(op: string, message: string): StepResult {
    report(this.ctx, `action:${op}`, "failed_precondition", 0, message);
    return { status: "failed_precondition", message, output: "", durationMs: 0 };
  }

  /** Several lines run one after another in one turn of the queue, each with its deadline, up to the first failure. */
  private run(op: string, commandLines: string | readonly string[], timeoutMs: number): Promise<StepResult> {
    const lines = typeof commandLines === "string" ? [commandLines] : commandLines;
    const next = this.queue.then(async () => {
      let r: StepResult | undefined;
      for (const line of lines) {
        r = await this.runNow(op, line, timeoutMs);
        if (r.status !== "ok") break;
      }
      return r!;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async runNow(op: string, commandLine: string, timeoutMs: number): Promise<StepResult> {
    const t0 = performance.now();
    const done = (status: StepStatus, message: string, output = ""): StepResult => {
      const durationMs = performance.now() - t0;
      report(this.ctx, `action:${op}`, status, durationMs, message);
      return { status, message, output, durationMs };
    };
    if (this.closed) return done("failed_precondition", "action channel is closed");
    try {
      if (!this.stream) await this.ensureOpen(timeoutMs);
      const left = timeoutMs - (performance.now() - t0);
      const r = await this.exchange(commandLine, Math.max(1, left));
      if (r.status === "ok" && /(^|\n)\s*(Error|Exception)|Unknown command|not found/.test(r.output))
        return done("internal_error", `${op}: ${r.output.trim()}`, r.output);
      return done(r.status, r.message, r.output);
    } catch (e) {
      this.teardown("action failed");
      const d = describeError(e, { serial: this.ctx.serial, host: this.ctx.cfg.host, port: this.ctx.cfg.port });
      return done(d.status, `action channel ${op}: ${d.message}`);
    }
  }

  private ensureOpen(timeoutMs: number): Promise<void> {
    if (this.stream) return Promise.resolve();
    if (this.opening) return this.opening;
    const h = serviceStream(this.ctx.cfg.host, this.ctx.cfg.port, this.ctx.serial, "shell:");
    this.opening = underDeadline(h, timeoutMs, `opening the action channel on '${this.ctx.serial}'`, () => h.opened)
      .then((s) => {
        if (this.closed) {
          h.destroy();
          throw new Error("action channel closed while opening");
        }
        this.attach(s, () => h.destroy());
      })
      .finally(() => {
        this.opening = undefined;
      });
    return this.opening;
  }

  private attach(s: Duplex, destroy: () => void): void {
    this.stream = s;
    this.destroyStream = destroy;
    this.partial = "";
    s.setEncoding("utf8");
    s.on("data", (chunk: string) => this.onData(chunk));
    const ended = () => {
      if (this.stream !== s) return;
      this.teardown(`the device closed the action channel stream (device '${this.ctx.serial}' gone or restarted)`);
    };
    s.once("end", ended);
    s.once("close", ended);
    s.on("error", () => ended());
  }

  private onData(chunk: string): void {
    const text = this.partial + chunk;
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl < 0) break;
      let line = text.slice(start, nl);
      start = nl + 1;
      if (line.endsWith("\r")) line = line.slice(0, -1);
      const p = this.pending;
      if (!p) continue; // stray output (e.g. a prompt) between actions
      if (line === p.marker) {
        this.pending = undefined;
        p.resolve({ status: "ok", message: "", output: p.out.join("\n") });
      } else if (!line.includes(p.marker)) {
        p.out.push(line); // the command's own output (an echoed command line on a PTY contains the marker and is skipped)
      }
    }
    this.partial = start === 0 ? text : text.slice(start);
    if (this.partial.length > 1 << 20) this.partial = this.partial.slice(-4096);
  }

  private exchange(commandLine: string, timeoutMs: number): Promise<{ status: StepStatus; message: string; output: string }> {
    const s = this.stream;
    if (!s) return Promise.resolve({ status: "adb_error", message: "action channel is not open", output: "" });
    const marker = `${MARK}${++this.seq}__`;
    const answer = new Promise<{ status: StepStatus; message: string; output: string }>((resolve) => {
      this.pending = { marker, out: [], resolve };
    });
    s.write(`${commandLine}; echo ${marker}\n`);
    return orTimeout(answer, timeoutMs, () => {
      this.pending = undefined;
      // The stream state is unknown after a missed marker: drop it; the next action reopens.
      this.teardown("action timed out");
      return { status: "timeout" as const, message: `action on '${this.ctx.serial}' did not complete within ${Math.round(timeoutMs)} ms`, output: "" };
    });
  }

  private teardown(reason: string): void {
    const p = this.pending;
    this.pending = undefined;
    const destroy = this.destroyStream;
    this.stream = undefined;
    this.destroyStream = undefined;
    destroy?.();
    p?.resolve({ status: "adb_error", message: `${reason}`, output: "" });
  }
}
