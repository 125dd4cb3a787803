/**
 * Avro block codecs. `deflate` is raw deflate (RFC 1951); `snappy` is a raw Snappy block followed by the
 * 4-byte big-endian CRC32 of the uncompressed data, as the Avro spec requires (avro-c and Python check it).
 */
import { promisify } from "node:util";
import zlib from "node:zlib";
import snappy from "snappyjs";
import { TrajectoryError, type CodecName } from "./types.ts";

export interface BlockCodec {
  compress(data: Buffer): Promise<Buffer>;
  decompress(data: Buffer): Promise<Buffer>;
}

const deflateRaw = promisify(zlib.deflateRaw);
const inflateRaw = promisify(zlib.inflateRaw);

const nullCodec: BlockCodec = {
  compress: async (d) => d,
  decompress: async (d) => d,
};

const deflateCodec: BlockCodec = {
  // Runs on the libuv pool, so compression overlaps encoding of the next block.
  compress: (d) => deflateRaw(d),
  decompress: (d) => inflateRaw(d),
};

const snappyCodec: BlockCodec = {
  async compress(d) {
    const body = snappy.compress(d);
    const out = Buffer.allocUnsafe(body.length + 4);
    body.copy(out, 0);
    out.writeUInt32BE(zlib.crc32(d), body.length);
    return out;
  },
  async decompress(d) {
    if (d.length < 4) throw new TrajectoryError("corrupt_file", "snappy block shorter than its CRC");
    const body = snappy.uncompress(d.subarray(0, d.length - 4));
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
