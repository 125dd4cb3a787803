/**
 * Reads exact byte counts from data pushed in arbitrary pieces (sync requests straddle WRTEs).
 */
export class ByteReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private ended = false;
  private wake: (() => void) | undefined;

  push(chunk: Buffer): void {
    if (this.ended || chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  /** Exactly n bytes, or undefined when input ended first. */
  async readExact(n: number): Promise<Buffer | undefined> {
    while (this.buffered < n) {
      if (this.ended) return undefined;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length ? [rest] : [];
    this.buffered = rest.length;
    return out;
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}
