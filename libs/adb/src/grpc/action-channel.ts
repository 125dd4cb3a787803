/**
 * The action channel over the emulator's gRPC: touches and keys as events of one `streamInputEvent` call
 * per device (input-stream.ts; `sendTouch` / `sendKey` for an emulator without it), no adb server, no shell. Touches carry a finger id (`identifier`; several ids = several fingers;
 * pressure > 0 = down or moving, 0 = up). Actions are serialised per channel (a touch sequence keeps its
 * order) and each has a deadline. Keys the emulator's `KeyboardEvent` cannot name go through the adb
 * shell channel, opened only if needed.
 */
import { KeyEventType, type KeyboardEventMsg, type TouchEventMsg } from "@farm/emulator-grpc";
import { ShellActionChannel } from "../action-channel.ts";
import { report, type DeviceCtx } from "../exec.ts";
import type { ActionChannel, StepResult } from "../types.ts";
import { describeGrpcError } from "./client.ts";
import type { GrpcEndpoint } from "./endpoints.ts";
import { InputEventStream } from "./input-stream.ts";
import { grpcKeyOf } from "./keys.ts";
import { sleep } from "@farm/time";
import { isKeyCodeText } from "@farm/key-codes";
import { checkInputText, keyEventsProblem } from "../validate.ts";
import { androidInputText, inputTextPieces } from "../quote.ts";

/** Interval of the moves that make up a swipe (a 60 Hz touch screen). */
const SWIPE_STEP_MS = 16;

const ok = (t0: number): StepResult => ({ status: "ok", message: "", output: "", durationMs: performance.now() - t0 });

export class GrpcActionChannel implements ActionChannel {
  private queue: Promise<unknown> = Promise.resolve();
  private shell: ShellActionChannel | undefined;
  private closed = false;
  private fallbackNoted = false;
  private readonly input: InputEventStream;

  constructor(
    private readonly ctx: DeviceCtx,
    readonly endpoint: GrpcEndpoint,
    private readonly timeoutMs = ctx.cfg.actionTimeoutMs,
  ) {
    this.input = new InputEventStream(endpoint);
  }

  /** Runs `work` after the actions before it; reports it as one public operation. */
  private serial<T extends StepResult>(op: string, work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      const r = await work();
      report(this.ctx, op, r.status, r.durationMs, r.message);
      return r;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private bad(op: string, message: string): Promise<StepResult> {
    const r: StepResult = { status: "failed_precondition", message, output: "", durationMs: 0 };
    report(this.ctx, op, r.status, 0, message);
    return Promise.resolve(r);
  }

  private async send(what: string, msg: TouchEventMsg | TouchEventMsg[], t0: number): Promise<StepResult> {
    if (this.closed) return { status: "adb_error", message: `${what} on '${this.ctx.serial}': the action channel is closed`, output: "", durationMs: 0 };
    const r = await this.input.send(Array.isArray(msg) ? msg.map((touch) => ({ touch })) : [{ touch: msg }], this.timeoutMs);
    this.noteFallback();
    if (r.ok) return ok(t0);
    const d = describeGrpcError(r.err, what, this.ctx.serial, this.endpoint);
    return { status: d.status, message: d.message, output: "", durationMs: performance.now() - t0 };
  }

  /** One line when the emulator turns out to lack streamInputEvent (its actions go unary from then on). */
  private noteFallback(): void {
    if (!this.input.unsupported || this.fallbackNoted) return;
    this.fallbackNoted = true;
    this.ctx.cfg.logger.warn({ event: "adb:input-stream-unsupported", serial: this.ctx.serial, endpoint: this.endpoint.address }, "the emulator has no streamInputEvent; actions use sendTouch / sendKey");
  }

  private static point(x: number, y: number, finger: number, pressure: number): TouchEventMsg {
    return { touches: [{ x: Math.trunc(x), y: Math.trunc(y), identifier: finger, pressure }] };
  }

  private static valid(...v: number[]): boolean {
    return v.every((n) => Number.isFinite(n) && n >= 0);
  }

  private touch(op: string, what: string, x: number, y: number, finger: number, pressure: number): Promise<StepResult> {
    if (!GrpcActionChannel.valid(x, y) || !Number.isSafeInteger(finger) || finger < 0) return this.bad(op, `${what}: coordinates must be non-negative numbers and the finger id a non-negative integer, got (${x}, ${y}) finger ${finger}`);
    return this.serial(op, () => this.send(what, GrpcActionChannel.point(x, y, finger, pressure), performance.now()));
  }

  touchDown(x: number, y: number, finger = 0): Promise<StepResult> {
    return this.touch("action:touch", "touch down", x, y, finger, 1);
  }
  touchMove(x: number, y: number, finger = 0): Promise<StepResult> {
    return this.touch("action:touch", "touch move", x, y, finger, 1);
  }
  touchUp(x: number, y: number, finger = 0): Promise<StepResult> {
    return this.touch("action:touch", "touch up", x, y, finger, 0);
  }

  tap(x: number, y: number, finger = 0): Promise<StepResult> {
    if (!GrpcActionChannel.valid(x, y)) return this.bad("action:tap", `tap: coordinates must be non-negative numbers, got (${x}, ${y})`);
    return this.serial("action:tap", () => this.send("tap", [GrpcActionChannel.point(x, y, finger, 1), GrpcActionChannel.point(x, y, finger, 0)], performance.now()));
  }

  swipe(x1: number, y1: number, x2: number, y2: number, durationMs: number, finger = 0): Promise<StepResult> {
    if (!GrpcActionChannel.valid(x1, y1, x2, y2, durationMs)) return this.bad("action:swipe", `swipe: coordinates and duration must be non-negative numbers, got (${x1}, ${y1}) → (${x2}, ${y2}) in ${durationMs} ms`);
    return this.serial("action:swipe", async () => {
      const t0 = performance.now();
      const steps = Math.max(1, Math.round(durationMs / SWIPE_STEP_MS));
      let r = await this.send("swipe", GrpcActionChannel.point(x1, y1, finger, 1), t0);
      for (let i = 1; i <= steps && r.status === "ok"; i++) {
        // Paced like a finger: the moves take the swipe's duration.
        const due = t0 + (durationMs * i) / steps;
        const wait = due - performance.now();
        if (wait > 1) await sleep(wait);
        r = await this.send("swipe", GrpcActionChannel.point(x1 + ((x2 - x1) * i) / steps, y1 + ((y2 - y1) * i) / steps, finger, 1), t0);
      }
      if (r.status !== "ok") return r;
      return this.send("swipe", GrpcActionChannel.point(x2, y2, finger, 0), t0);
    });
  }

  keyEvent(keycode: string): Promise<StepResult> {
    const key = grpcKeyOf(keycode);
    if (key === undefined) {
      if (!isKeyCodeText(keycode)) return this.bad("action:key", `keyEvent: invalid keycode ${JSON.stringify(keycode)} (expected KEYCODE_… or a number)`);
      // A key the gRPC KeyboardEvent cannot name: the shell channel sends it as `input keyevent`.
      this.shell ??= new ShellActionChannel(this.ctx);
      const sh = this.shell;
      return this.serial("action:key", () => sh.keyEvent(keycode));
    }
    return this.serial("action:key", () => this.sendKey({ codeType: 0, eventType: KeyEventType.keypress, keyCode: 0, key, text: "" }, `key ${keycode}`));
  }

  /** The keys as one write on the input stream; if one has no KeyboardEvent name, all go as one `input keyevent` on the shell channel. */
  keyEvents(keycodes: readonly string[]): Promise<StepResult> {
    const bad = keyEventsProblem(keycodes);
    if (bad) return this.bad("action:keys", bad);
    const keys = keycodes.map(grpcKeyOf);
    if (keys.some((k) => k === undefined)) {
      this.shell ??= new ShellActionChannel(this.ctx);
      const sh = this.shell;
      return this.serial("action:keys", () => sh.keyEvents(keycodes));
    }
    return this.serial("action:keys", () => this.sendKey(keys.map((key) => ({ codeType: 0, eventType: KeyEventType.keypress, keyCode: 0, key: key!, text: "" })), `${keycodes.length} keys`));
  }

  /**
   * The text as KeyboardEvents with `text` (the emulator types it literally), on the input stream like every key: `%s`
   * made a space first, as the shell channel's `input text` makes it, and at most 1 KB a message, as there.
   */
  text(text: string): Promise<StepResult> {
    const bad = checkInputText(text);
    if (bad) return this.bad("action:text", bad);
    const events = inputTextPieces(text).map((piece) => ({ codeType: 0, eventType: KeyEventType.keypress, keyCode: 0, key: "", text: androidInputText(piece) }));
    return this.serial("action:text", () => this.sendKey(events, "text"));
  }

  private async sendKey(keys: KeyboardEventMsg | KeyboardEventMsg[], what: string): Promise<StepResult> {
    const t0 = performance.now();
    if (this.closed) return { status: "adb_error", message: `${what} on '${this.ctx.serial}': the action channel is closed`, output: "", durationMs: 0 };
    const r = await this.input.send((Array.isArray(keys) ? keys : [keys]).map((key) => ({ key })), this.timeoutMs);
    this.noteFallback();
    if (r.ok) return ok(t0);
    const d = describeGrpcError(r.err, what, this.ctx.serial, this.endpoint);
    return { status: d.status, message: d.message, output: "", durationMs: performance.now() - t0 };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
    await this.input.close();
    await this.shell?.close();
  }
}
