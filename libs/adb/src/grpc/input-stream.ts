/**
 * Touches and keys as one long-lived `streamInputEvent` call per device: an action is a DATA frame on an
 * open HTTP/2 stream, not a request of its own (measured: a unary sendTouch costs the worker more CPU than
 * the adb shell channel). The emulator applies the events in order.
 *
 * A stream has no per-event answer, so three things the unary calls gave for free are kept here:
 * - Liveness: before an action, when the device has not answered for INPUT_LIVENESS_MS, one getStatus within the
 *   action's deadline (a frozen emulator still takes bytes into its socket buffers).
 * - An emulator without streamInputEvent answers UNIMPLEMENTED at once: events written meanwhile are
 *   replayed through sendTouch / sendKey and the device stays on the unary calls.
 * - A stream that ends (emulator gone, connection lost) fails the next action with its status, and the
 *   action after that opens a new stream.
 */
import { encodeInputEvent, grpcFrame } from "@farm/emulator-grpc/wire";
import type { KeyboardEventMsg, TouchEventMsg } from "@farm/emulator-grpc";
import { emulatorCalls } from "./client.ts";
import type { GrpcEndpoint } from "./endpoints.ts";
import { GrpcCode, h2Client, type ClientStream, type GrpcFailure } from "./h2-client.ts";
import { sleep } from "@farm/time";

export type InputEvent = { touch: TouchEventMsg } | { key: KeyboardEventMsg };
export type SendOutcome = { ok: true } | { ok: false; err: GrpcFailure };

const PATH = "/android.emulation.control.EmulatorController/streamInputEvent";
/** How long a device may go without answering before an action checks it first. */
export const INPUT_LIVENESS_MS = 1000;
/** How long a new stream keeps its events for a replay (an UNIMPLEMENTED answer comes within a round trip). */
const CONFIRM_MS = 2000;
/** How long the first stream to an emulator waits to be accepted or refused before events go on it. */
const PROBE_MS = 100;
const EMPTY_EVENT = grpcFrame(new Uint8Array(0));
/** Bytes the connection has not taken yet beyond which the emulator counts as not reading. */
const MAX_BUFFERED = 1 << 20;

export class InputEventStream {
  private stream: ClientStream | undefined;
  private openedAt = 0;
  /** Events written on a stream not yet known to be served (replayed if it answers UNIMPLEMENTED). */
  private unconfirmed: InputEvent[] | undefined;
  private lastAlive = 0;
  /** The emulator has no streamInputEvent: every event goes through the unary calls. */
  unsupported = false;
  private probed = false;

  constructor(readonly endpoint: GrpcEndpoint) {}

  /** Sends the events in order (one write); resolves once they are on their way or with what went wrong. */
  async send(events: InputEvent[], timeoutMs: number): Promise<SendOutcome> {
    if (this.unsupported) return this.unary(events, timeoutMs);
    // The hot path (an open stream, a device heard from within the second) awaits nothing.
    if (this.stream?.ended) {
      const ended = await this.endedStream();
      if (ended) return ended;
      if (this.unsupported) return this.unary(events, timeoutMs);
    }
    if (performance.now() - this.lastAlive > INPUT_LIVENESS_MS) {
      const status = await emulatorCalls.getStatus(this.endpoint, timeoutMs);
      if (!status.ok) return status;
      this.lastAlive = performance.now();
    }
    const stream = this.stream && !this.stream.ended ? this.stream : await this.open();
    if (stream.ended) return (await this.endedStream()) ?? this.unary(events, timeoutMs);
    if (stream.buffered > MAX_BUFFERED) return { ok: false, err: { code: GrpcCode.DEADLINE_EXCEEDED, details: `the emulator stopped reading input events (${stream.buffered} bytes waiting)` } };
    const frames = events.map((ev) => grpcFrame(encodeInputEvent(ev)));
    stream.write(frames.length === 1 ? frames[0]! : Buffer.concat(frames));
    this.noteUnconfirmed(events);
    return { ok: true };
  }

  /** Ends the stream (the emulator answers it), after replaying what an UNIMPLEMENTED answer dropped. */
  async close(): Promise<void> {
    await this.endedStream();
    this.stream?.end();
    this.stream = undefined;
  }

  /**
   * A new stream. The first stream to an endpoint waits briefly for the emulator to accept
   * it (response headers) or refuse it (UNIMPLEMENTED), so an emulator without the call loses no event.
   */
  private async open(): Promise<ClientStream> {
    const stream = h2Client(this.endpoint).openStream(PATH, this.endpoint);
    this.stream = stream;
    this.openedAt = performance.now();
    this.unconfirmed = [];
    if (!this.probed) {
      this.probed = true;
      // An empty InputEvent (no kind set: nothing happens) gets the call going: servers may wait for the
      // first message before they answer, and UNIMPLEMENTED must come before real events are written.
      stream.write(EMPTY_EVENT);
      const probeDone = new AbortController();
      await Promise.race([stream.accepted, sleep(PROBE_MS, probeDone.signal)]);
      probeDone.abort();
    }
    return stream;
  }

  private noteUnconfirmed(events: InputEvent[]): void {
    if (!this.unconfirmed) return;
    if (this.stream?.answered || performance.now() - this.openedAt > CONFIRM_MS) this.unconfirmed = undefined;
    else this.unconfirmed.push(...events);
  }

  /**
   * When the open stream has ended: UNIMPLEMENTED switches to the unary calls (replaying what the stream
   * dropped; only a failed replay is answered); any other end is this action's failure (the next one reopens).
   */
  private async endedStream(): Promise<SendOutcome | undefined> {
    const stream = this.stream;
    if (!stream?.ended) return undefined;
    this.stream = undefined;
    const r = await stream.result;
    const dropped = this.unconfirmed ?? [];
    this.unconfirmed = undefined;
    if (r.ok) return undefined;
    if (r.err.code === GrpcCode.UNIMPLEMENTED) {
      this.unsupported = true;
      if (dropped.length === 0) return undefined;
      const replayed = await this.unary(dropped, INPUT_LIVENESS_MS * 5);
      return replayed.ok ? undefined : replayed;
    }
    return { ok: false, err: r.err };
  }

  private async unary(events: InputEvent[], timeoutMs: number): Promise<SendOutcome> {
    for (const ev of events) {
      const r = "touch" in ev ? await emulatorCalls.sendTouch(this.endpoint, ev.touch, timeoutMs) : await emulatorCalls.sendKey(this.endpoint, ev.key, timeoutMs);
      if (!r.ok) return r;
    }
    return { ok: true };
  }
}
