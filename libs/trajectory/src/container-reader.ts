/**
 * Streams the records of one container file with bounded memory (one block at a time), checking every
 * sync marker and rejecting a file that ends inside a block: a truncated file is an error, not a
 * shorter data set.
 */
import { createReadStream } from "node:fs";
import type { Type } from "avsc";
import { blockCodec, type BlockCodec } from "./block-codecs.ts";
import { headerType, longType, MAGIC, SYNC_BYTES, type ContainerHeader } from "./container-format.ts";
import { avroTypeFor } from "./logical-types.ts";
import { TrajectoryError } from "./types.ts";

export interface ContainerInfo {
  codec: string;
  /** The writer's schema as stored in the file. */
  schemaJson: string;
  /** Header metadata other than avro.*, as UTF-8 strings. */
  meta: Record<string, string>;
}

type Decode = (buf: Buffer, pos: number) => { value: unknown; offset: number };

/** Reader type → writer schema text → decoding function; cached because every file of a version shares it. */
const decoderCache = new WeakMap<Type, Map<string, Decode>>();

function decoderFor(readerType: Type, schemaJson: string): Decode {
  let bySchema = decoderCache.get(readerType);
  if (!bySchema) decoderCache.set(readerType, (bySchema = new Map()));
  let decode = bySchema.get(schemaJson);
  if (!decode) {
    const resolver = readerType.createResolver(avroTypeFor(JSON.parse(schemaJson)));
    decode = (buf, pos) => readerType.decode(buf, pos, resolver);
    bySchema.set(schemaJson, decode);
  }
  return decode;
}

function corrupt(file: string, why: string): TrajectoryError {
  return new TrajectoryError("corrupt_file", `${file}: ${why}`);
}

/**
 * Opens a container file: resolves with its header info and an async iterable of its records, each
 * resolved from the writer's schema (in the header) into `readerType` (Avro schema resolution).
 */
export async function openContainer(
  file: string,
  readerType: Type,
): Promise<{ info: ContainerInfo; records: AsyncGenerator<unknown> }> {
  const chunks = createReadStream(file, { highWaterMark: 256 * 1024 })[Symbol.asyncIterator]();
  let buf: Buffer = Buffer.alloc(0);
  let eof = false;
  /** Reads until at least `n` bytes are buffered past `pos` or the file ends. */
  const fill = async (pos: number, n: number): Promise<number> => {
    while (!eof && buf.length - pos < n) {
      const next = await chunks.next();
      if (next.done) {
        eof = true;
      } else {
        // Drop consumed bytes so memory holds at most the current block plus one chunk.
        buf = Buffer.concat([buf.subarray(pos), next.value as Buffer]);
        pos = 0;
      }
    }
    return pos;
  };

  let pos = await fill(0, MAGIC.length);
  if (buf.length < MAGIC.length || !buf.subarray(0, MAGIC.length).equals(MAGIC)) {
    await chunks.return?.();
    throw corrupt(file, "not an Avro container file (bad magic)");
  }
  let header: ContainerHeader | undefined;
  for (;;) {
    const r = headerType.decode(buf, pos);
    if (r.offset >= 0) {
      header = r.value as ContainerHeader;
      pos = r.offset;
      break;
    }
    if (eof) {
      await chunks.return?.();
      throw corrupt(file, "file ends inside the header");
    }
    pos = await fill(pos, buf.length - pos + 64 * 1024);
  }
  const schemaJson = header.meta["avro.schema"]?.toString("utf8");
  const codecName = header.meta["avro.codec"]?.toString("utf8") ?? "null";
  let codec: BlockCodec;
  let decode: Decode;
  try {
    if (!schemaJson) throw corrupt(file, "header has no avro.schema");
    codec = blockCodec(codecName);
    decode = decoderFor(readerType, schemaJson);
  } catch (err) {
    await chunks.return?.(); // release the file before reporting
    throw err;
  }
  const sync = header.sync;
  const meta: Record<string, string> = {};
  for (const [k, v] of Object.entries(header.meta)) if (!k.startsWith("avro.")) meta[k] = v.toString("utf8");

  async function* records(): AsyncGenerator<unknown> {
    try {
      for (;;) {
        pos = await fill(pos, 20);
        if (pos === buf.length && eof) return;
        const count = longType.decode(buf, pos);
        const size = count.offset >= 0 ? longType.decode(buf, count.offset) : { value: -1, offset: -1 };
        if (count.offset < 0 || size.offset < 0) throw corrupt(file, "file ends inside a block header");
        const n = count.value as number;
        const bytes = size.value as number;
        if (n < 0 || bytes < 0) throw corrupt(file, "negative block count or size");
        const start = size.offset - pos;
        pos = await fill(pos, start + bytes + SYNC_BYTES);
        const dataStart = pos + start;
        if (buf.length < dataStart + bytes + SYNC_BYTES) throw corrupt(file, "file ends inside a block (truncated)");
        if (!buf.subarray(dataStart + bytes, dataStart + bytes + SYNC_BYTES).equals(sync)) throw corrupt(file, "bad sync marker");
        const data = await codec.decompress(buf.subarray(dataStart, dataStart + bytes));
        pos = dataStart + bytes + SYNC_BYTES;
        let at = 0;
        for (let i = 0; i < n; i++) {
          const r = decode(data, at);
          if (r.offset < 0) throw corrupt(file, "record runs past its block");
          at = r.offset;
          yield r.value;
        }
        if (at !== data.length) throw corrupt(file, "block has bytes after its last record");
      }
    } finally {
      await chunks.return?.();
    }
  }
  return { info: { codec: codecName, schemaJson: schemaJson!, meta }, records: records() };
}
