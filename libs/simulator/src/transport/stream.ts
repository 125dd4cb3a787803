/**
 * One multiplexed ADB stream on the device side. Outgoing bytes are split to the negotiated maxdata
 * and sent one WRTE at a time (the next only after the host's OKAY, §3 flow control).
 */
export interface StreamSink {
  /** Sends a WRTE/CLSE for this stream on the connection. */
  sendWrite(localId: number, remoteId: number, data: Uint8Array): void;
  sendClose(localId: number, remoteId: number): void;
  readonly maxData: number;
}

/** The reason a service's signal reports once its stream ended (one object: streams end by the thousand). */
const STREAM_ENDED = Object.freeze(new Error("the adb stream ended"));

export class AdbStream {
  private queue: Uint8Array[] = [];
  private awaitingAck = false;
  private closeRequested = false;
  private closed = false;
  private readonly abort = new AbortController();
  private drainWaiters: (() => void)[] = [];
  /** Host data for this stream (already acknowledged); set by the service that owns the stream. */
  onData: (data: Buffer) => void = () => {};

  constructor(
    readonly localId: number,
    readonly remoteId: number,
    readonly service: string,
    private readonly sink: StreamSink,
  ) {}

  /** Aborted once the stream is closed from either side or the connection is gone. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** Largest WRTE payload on this connection. */
  get maxData(): number {
    return this.sink.maxData;
  }

  get isClosed(): boolean {
    return this.closed || this.closeRequested;
  }

  write(chunk: Uint8Array | string): void {
    if (this.isClosed) return;
    // Copy: the writer may reuse its buffer (a canvas, a read buffer) before the host has acked.
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk);
    const max = this.sink.maxData;
    for (let off = 0; off < bytes.length; off += max) this.queue.push(bytes.subarray(off, Math.min(off + max, bytes.length)));
    this.pump();
  }

  /** Resolves once every queued byte has been handed to the connection (or the stream is gone). */
  drained(): Promise<void> {
    if (this.queue.length === 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Closes after the queued data has gone out. */
  close(): void {
    if (this.isClosed) return;
    this.closeRequested = true;
    this.pump();
  }

  /** Host acknowledged our last WRTE. */
  handleAck(): void {
    this.awaitingAck = false;
    this.pump();
  }

  /** Host closed the stream, or the connection died: nothing more can be sent. */
  handleRemoteClose(): void {
    this.finish();
  }

  private pump(): void {
    if (this.closed) return;
    if (!this.awaitingAck) {
      const next = this.queue.shift();
      if (next) {
        this.awaitingAck = true;
        this.sink.sendWrite(this.localId, this.remoteId, next);
      }
    }
    if (this.queue.length === 0) this.releaseDrainWaiters();
    if (this.closeRequested && this.queue.length === 0) {
      this.sink.sendClose(this.localId, this.remoteId);
      this.finish();
    }
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.releaseDrainWaiters();
    // A reason given: without one, abort() makes a DOMException (and its stack) for every stream that ends.
    this.abort.abort(STREAM_ENDED);
  }

  private releaseDrainWaiters(): void {
    const w = this.drainWaiters;
    this.drainWaiters = [];
    for (const f of w) f();
  }
}
