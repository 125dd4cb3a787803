/**
 * Avro block codecs. `deflate` is raw deflate (RFC 1951); `snappy` is a raw Snappy block followed by the
 * 4-byte big-endian CRC32 of the uncompressed data, as the Avro spec requires (avro-c and Python check it).
 */
import buffer from "node:buffer";
import { promisify } from "node:util";
import zlib from "node:zlib";
import snappy from "snappyjs";
import { TrajectoryError, type CodecName } from "./types.ts";
import { coerceError } from "@farm/errors";

export interface BlockCodec {
  compress(data: Buffer): Promise<Buffer>;
  /** Throws `corrupt_file` when the block would decompress to more than `maxBytes` (a decompression bomb stops there). */
  decompress(data: Buffer, maxBytes?: number): Promise<Buffer>;
}

function tooLarge(maxBytes: number): TrajectoryError {
  return new TrajectoryError("corrupt_file", `block decompresses to more than the read budget of ${maxBytes} bytes (FARM_TRAJECTORY_READ_BUDGET_MB)`);
}

/** The uncompressed length a raw Snappy block declares (a little-endian base-128 varint), or -1. */
function snappyDeclaredLength(d: Buffer): number {
  let n = 0;
  let mul = 1;
  for (let i = 0; i < 5 && i < d.length; i++) {
    n += (d[i]! & 0x7f) * mul;
    if ((d[i]! & 0x80) === 0) return n;
    mul *= 128;
  }
  return -1;
}

const deflateRaw = promisify(zlib.deflateRaw);
const inflateRaw = promisify(zlib.inflateRaw);

const nullCodec: BlockCodec = {
  compress: async (d) => d,
  decompress: async (d) => d,
};

/**
 * Blocks up to this size are compressed on the calling thread: a pool round trip costs ~110 µs of CPU in
 * zlib's stream machinery, more than deflating a few KB takes (~25 µs for 2 KB, ~80 µs for 8 KB). In
 * `farm bench scale` this cut a worker host's CPU per 5-step episode by ~13 %. Bigger blocks (frames) go to
 * the pool, where compression overlaps encoding of the next block and the event loop is not held for ms.
 */
const INLINE_CODEC_MAX_BYTES = 16 * 1024;

const deflateCodec: BlockCodec = {
  compress: async (d) => (d.length <= INLINE_CODEC_MAX_BYTES ? zlib.deflateRawSync(d) : deflateRaw(d)),
  async decompress(d, maxBytes = Number.MAX_SAFE_INTEGER) {
    try {
      // zlib stops inflating at maxOutputLength, so a bomb never grows past the budget.
      // Always on the pool: a small block may inflate to megabytes (up to the budget).
      return await inflateRaw(d, { maxOutputLength: Math.min(maxBytes, buffer.kMaxLength) });
    } catch (err) {
      if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") throw tooLarge(maxBytes);
      throw new TrajectoryError("corrupt_file", `deflate block does not inflate: ${coerceError(err).message}`, false, { cause: err });
    }
  },
};

const snappyCodec: BlockCodec = {
  async compress(d) {
    const body = snappy.compress(d);
    const out = Buffer.allocUnsafe(body.length + 4);
    body.copy(out, 0);
    out.writeUInt32BE(zlib.crc32(d), body.length);
    return out;
  },
  async decompress(d, maxBytes = Number.MAX_SAFE_INTEGER) {
    if (d.length < 4) throw new TrajectoryError("corrupt_file", "snappy block shorter than its CRC");
    const declared = snappyDeclaredLength(d);
    if (declared < 0) throw new TrajectoryError("corrupt_file", "snappy block has no valid length prefix");
    if (declared > maxBytes) throw tooLarge(maxBytes);
    let body: Buffer;
    try {
      body = snappy.uncompress(d.subarray(0, d.length - 4), maxBytes);
    } catch (err) {
      throw new TrajectoryError("corrupt_file", `snappy block does not decompress: ${coerceError(err).message}`, false, { cause: err });
    }
    const expected = d.readUInt32BE(d.length - 4);
    if (zlib.crc32(body) !== expected) throw new TrajectoryError("corrupt_file", "snappy block CRC mismatch");
    return body;
  },
};

const codecs: Record<CodecName, BlockCodec> = { null: nullCodec, deflate: deflateCodec, snappy: snappyCodec };

export function blockCodec(name: string): BlockCodec {
  const c = (codecs as Record<string, BlockCodec | undefined>)[name];
  if (!c) throw new TrajectoryError("unsupported_codec", `unsupported Avro codec '${name}' (supported: ${Object.keys(codecs).join(", ")})`);
  return c;
}

/** The callback-style codecs avsc's BlockEncoder/BlockDecoder take (used by the benchmark baseline). */
export function avscEncoderCodecs(): Record<string, (buf: Buffer, cb: (err: Error | null, out?: Buffer) => void) => void> {
  const wrap = (f: (d: Buffer) => Promise<Buffer>) => (buf: Buffer, cb: (err: Error | null, out?: Buffer) => void) => {
    f(buf).then((out) => cb(null, out), (err: Error) => cb(err));
  };
  return {
    null: wrap(nullCodec.compress),
    deflate: (buf, cb) => zlib.deflateRaw(buf, cb),
    snappy: wrap(snappyCodec.compress),
  };
}
