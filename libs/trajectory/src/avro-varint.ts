/** Avro's zig-zag varint longs, read with bounds: never past `end`, never more than 10 bytes. */
import { FarmError } from "@farm/errors";

/** Thrown for bytes that cannot be a valid Avro value (callers add the file and where). */
export class AvroBoundsError extends FarmError<"corrupt_avro"> {
  override readonly name = "AvroBoundsError";
  /** the same input fails the same way (not retryable). */
  constructor(message: string) {
    super("corrupt_avro", message);
  }
}

export const NEED_MORE = -1;

/**
 * The long at `pos` as { value, offset }; offset = NEED_MORE when the varint runs past `end`.
 * Values beyond ±2^53 are returned approximately (callers bound them as sizes anyway).
 */
export function readLong(buf: Uint8Array, pos: number, end: number): { value: number; offset: number } {
  let n = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= end) return { value: 0, offset: NEED_MORE };
    const b = buf[pos++]!;
    n += (b & 0x7f) * mul;
    if ((b & 0x80) === 0) {
      // zig-zag: even → n/2, odd → -(n+1)/2 (arithmetic, since n may exceed 32 bits)
      const value = n % 2 === 0 ? n / 2 : -(n + 1) / 2;
      return { value, offset: pos };
    }
    mul *= 128;
  }
  throw new AvroBoundsError("varint longer than 10 bytes");
}

/** A declared size or count: a long in 0..max, or an AvroBoundsError naming `what`. */
export function readSize(buf: Uint8Array, pos: number, end: number, what: string, max: number): { value: number; offset: number } {
  const r = readLong(buf, pos, end);
  if (r.offset === NEED_MORE) return r;
  if (r.value < 0) throw new AvroBoundsError(`negative ${what} (${r.value})`);
  if (r.value > max) throw new AvroBoundsError(`${what} of ${r.value} exceeds the ${max} available`);
  return r;
}
