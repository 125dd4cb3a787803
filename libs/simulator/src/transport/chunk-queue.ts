/**
 * A push-fed async iterable of byte chunks: the transport pushes host data, a command consumes it
 * with `for await`. end() finishes the iteration once queued chunks are consumed.
 */
export class ChunkQueue implements AsyncIterable<Uint8Array> {
  private queued: Uint8Array[] = [];
  private ended = false;
  private wake: (() => void) | undefined;

  push(chunk: Uint8Array): void {
    if (this.ended || chunk.length === 0) return;
    this.queued.push(chunk);
    this.wakeReader();
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.wakeReader();
  }

  private wakeReader(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    for (;;) {
      const next = this.queued.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

/** An already-ended input, for commands that get no stdin (lines of an interactive shell). */
export function emptyInput(): AsyncIterable<Uint8Array> {
  const q = new ChunkQueue();
  q.end();
  return q;
}
