/**
 * The frames of one episode, encoded while the episode goes on. `add()` starts the encode and returns at
 * once, so a step never waits for its frame; only when more than `maxInFlight` frames are still being
 * encoded does `add()` wait for the oldest (backpressure: memory stays bounded when encoding falls behind).
 * `finish()` waits for the rest and gives the encoded frames by key (a step index); a frame that failed to
 * encode is left out and counted, never thrown.
 */
import { encodeFrame, type RawFrame } from "./encode.ts";
import type { FrameSpec } from "./spec.ts";

export interface FrameRecorderStats {
  /** Frames handed to `add()`. */
  submitted: number;
  /** Frames that failed to encode (left out of the result). */
  failed: number;
  /** The first failure's message, for the episode's log line. */
  firstError?: string;
  /** Time `add()` spent waiting for an encode slot, summed (ms): how far encoding fell behind. */
  waitedMs: number;
  /** Encoded bytes, summed. */
  bytes: number;
}

/** Raw frames held while being encoded at most (each up to 8 MB at 1080x1920 RGBA). */
export const DEFAULT_MAX_IN_FLIGHT = 4;

export class FrameRecorder {
  private readonly pending: Array<Promise<void>> = [];
  private readonly frames = new Map<number, Uint8Array>();
  readonly stats: FrameRecorderStats = { submitted: 0, failed: 0, waitedMs: 0, bytes: 0 };

  constructor(
    readonly spec: FrameSpec,
    private readonly maxInFlight = DEFAULT_MAX_IN_FLIGHT,
    private readonly encode: (f: RawFrame, spec: FrameSpec) => Promise<Uint8Array> = encodeFrame,
  ) {
    if (!(Number.isSafeInteger(maxInFlight) && maxInFlight >= 1)) throw new Error(`maxInFlight must be a positive integer, got ${maxInFlight}`);
  }

  /** Starts encoding `frame` under `key`; resolves once it is under way (at once unless `maxInFlight` encodes are running). */
  async add(key: number, frame: RawFrame): Promise<void> {
    await this.slot();
    this.follow(key, this.encode(frame, this.spec));
  }

  /** Keeps an encoding already under way elsewhere (e.g. a driver's frame thread) under `key`; waits like `add()` when too many are. */
  async track(key: number, encoding: Promise<Uint8Array>): Promise<void> {
    encoding.catch(() => undefined);
    await this.slot();
    this.follow(key, encoding);
  }

  private async slot(): Promise<void> {
    this.stats.submitted++;
    while (this.pending.length >= this.maxInFlight) {
      const t0 = performance.now();
      await Promise.race(this.pending);
      this.stats.waitedMs += performance.now() - t0;
    }
  }

  private follow(key: number, encoding: Promise<Uint8Array>): void {
    const p: Promise<void> = encoding.then(
      (bytes) => {
        this.frames.set(key, bytes);
        this.stats.bytes += bytes.byteLength;
      },
      (e: unknown) => {
        this.stats.failed++;
        this.stats.firstError ??= e instanceof Error ? e.message : String(e);
      },
    ).finally(() => {
      const i = this.pending.indexOf(p);
      if (i >= 0) this.pending.splice(i, 1);
    });
    this.pending.push(p);
  }

  /** Frames still being encoded. */
  get inFlight(): number {
    return this.pending.length;
  }

  /** Waits for every encode; the encoded frames by key. */
  async finish(): Promise<Map<number, Uint8Array>> {
    while (this.pending.length > 0) await Promise.all([...this.pending]);
    return this.frames;
  }
}
