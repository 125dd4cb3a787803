/** An in-memory byte channel connecting two stages of a pipeline (`am stack list | grep …`). */
import { toBytes, type Chunk } from "./io.ts";

export class PipeChannel implements AsyncIterable<Uint8Array> {
  private readonly queue: Uint8Array[] = [];
  private closed = false;
  private wake: (() => void) | undefined;

  constructor(signal: AbortSignal) {
    signal.addEventListener("abort", () => this.close(), { once: true });
  }

  readonly write = (chunk: Chunk): void => {
    if (this.closed) return;
    const bytes = toBytes(chunk);
    if (bytes.length === 0) return;
    this.queue.push(bytes);
    this.notify();
  };

  close(): void {
    this.closed = true;
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    for (;;) {
      const next = this.queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}
