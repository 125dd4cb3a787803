/**
 * Shell protocol v2 framing inside a stream: 1-byte id + u32 LE length + payload (§4.4).
 */
export const V2_STDIN = 0;
export const V2_STDOUT = 1;
export const V2_STDERR = 2;
export const V2_EXIT = 3;
export const V2_CLOSE_STDIN = 4;
export const V2_WINDOW_SIZE = 5;

const V2_HEADER = 5;

export function encodeV2(id: number, payload: Uint8Array, maxFrame: number): Buffer[] {
  const frames: Buffer[] = [];
  const step = Math.max(1, maxFrame - V2_HEADER);
  let off = 0;
  do {
    const part = payload.subarray(off, Math.min(off + step, payload.length));
    const frame = Buffer.allocUnsafe(V2_HEADER + part.length);
    frame[0] = id;
    frame.writeUInt32LE(part.length, 1);
    frame.set(part, V2_HEADER);
    frames.push(frame);
    off += step;
  } while (off < payload.length);
  return frames;
}

export function encodeV2Exit(code: number): Buffer {
  return Buffer.from([V2_EXIT, 1, 0, 0, 0, code & 0xff]);
}

/** Reassembles v2 frames from host WRTEs, which may split or merge frames arbitrarily. */
export class V2FrameReader {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): { id: number; payload: Buffer }[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: { id: number; payload: Buffer }[] = [];
    while (this.pending.length >= V2_HEADER) {
      const len = this.pending.readUInt32LE(1);
      if (this.pending.length < V2_HEADER + len) break;
      out.push({ id: this.pending[0]!, payload: this.pending.subarray(V2_HEADER, V2_HEADER + len) });
      this.pending = this.pending.subarray(V2_HEADER + len);
    }
    return out;
  }
}
