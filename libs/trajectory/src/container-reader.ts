/**
 * Streams the records of one container file with bounded memory (one block at a time), checking every
 * sync marker and rejecting a file that ends inside a block: a truncated file is an error, not a
 * shorter data set. Every size the file declares (header entries, block size and count, lengths and
 * entry counts inside records, the decompressed size) is checked against the bytes present and the
 * read budget (read-limits.ts) before it is trusted; every error names the file and, once blocks are
 * read, the block and record.
 */
import { createReadStream } from "node:fs";
import type { Type } from "avsc";
import { checkAvroDatum } from "./avro-bounds.ts";
import { AvroBoundsError, NEED_MORE, readLong } from "./avro-varint.ts";
import { blockCodec, type BlockCodec } from "./block-codecs.ts";
import { SYNC_BYTES } from "./container-format.ts";
import { parseContainerHeader } from "./container-header.ts";
import { avroTypeFor } from "./logical-types.ts";
import { resolveReadLimits, type ReadLimits } from "./read-limits.ts";
import { TrajectoryError } from "./types.ts";

export interface ContainerInfo {
  codec: string;
  /** The writer's schema as stored in the file. */
  schemaJson: string;
  /** Header metadata other than avro.*, as UTF-8 strings. */
  meta: Record<string, string>;
}

type Decode = (buf: Buffer, pos: number) => { value: unknown; offset: number };
interface SchemaCodec {
  writerType: Type;
  decode: Decode;
}

/** Reader type → writer schema text → decoding function; cached because every file of a version shares it. */
const decoderCache = new WeakMap<Type, Map<string, SchemaCodec>>();

function decoderFor(readerType: Type, schemaJson: string): SchemaCodec {
  let bySchema = decoderCache.get(readerType);
  if (!bySchema) decoderCache.set(readerType, (bySchema = new Map()));
  let codec = bySchema.get(schemaJson);
  if (!codec) {
    const writerType = avroTypeFor(JSON.parse(schemaJson));
    const resolver = readerType.createResolver(writerType);
    codec = { writerType, decode: (buf, pos) => readerType.decode(buf, pos, resolver) };
    bySchema.set(schemaJson, codec);
  }
  return codec;
}

function corrupt(file: string, why: string, cause?: unknown): TrajectoryError {
  return new TrajectoryError("corrupt_file", `${file}: ${why}`, false, cause === undefined ? undefined : { cause });
}

/** An error's message without the file prefix it may already carry. */
function reason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Opens a container file: resolves with its header info and an async iterable of its records, each
 * resolved from the writer's schema (in the header) into `readerType` (Avro schema resolution).
 */
export async function openContainer(
  file: string,
  readerType: Type,
  limits: ReadLimits = resolveReadLimits(),
): Promise<{ info: ContainerInfo; records: AsyncGenerator<unknown> }> {
  const chunks = createReadStream(file, { highWaterMark: 256 * 1024 })[Symbol.asyncIterator]();
  let buf: Buffer = Buffer.alloc(0);
  let eof = false;
  /** Reads until at least `n` bytes are buffered past `pos` or the file ends. */
  const fill = async (pos: number, n: number): Promise<number> => {
    while (!eof && buf.length - pos < n) {
      let next: IteratorResult<unknown>;
      try {
        next = await chunks.next();
      } catch (err) {
        throw corrupt(file, `cannot read: ${reason(err)}`, err);
      }
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
  const release = () => chunks.return?.().catch(() => undefined);

  let info: ContainerInfo;
  let codec: BlockCodec;
  let schema: SchemaCodec;
  let sync: Buffer;
  let pos: number;
  try {
    pos = await fill(0, 64 * 1024);
    for (;;) {
      let parsed: ReturnType<typeof parseContainerHeader>;
      try {
        parsed = parseContainerHeader(buf, eof);
      } catch (err) {
        throw corrupt(file, reason(err));
      }
      if ("header" in parsed) {
        const { header } = parsed;
        pos = parsed.offset;
        const schemaJson = header.meta["avro.schema"]?.toString("utf8");
        const codecName = header.meta["avro.codec"]?.toString("utf8") ?? "null";
        if (!schemaJson) throw corrupt(file, "header has no avro.schema");
        try {
          codec = blockCodec(codecName);
        } catch (err) {
          throw corrupt(file, reason(err));
        }
        try {
          schema = decoderFor(readerType, schemaJson);
        } catch (err) {
          throw corrupt(file, `header's avro.schema is not a schema this reader can resolve: ${reason(err)}`, err);
        }
        sync = header.sync;
        const meta: Record<string, string> = {};
        for (const [k, v] of Object.entries(header.meta)) if (!k.startsWith("avro.")) meta[k] = v.toString("utf8");
        info = { codec: codecName, schemaJson, meta };
        break;
      }
      if (buf.length >= limits.maxHeaderBytes) throw corrupt(file, `header is larger than ${limits.maxHeaderBytes} bytes`);
      pos = await fill(0, Math.min(limits.maxHeaderBytes, buf.length * 2 + 64 * 1024));
    }
  } catch (err) {
    await release(); // release the file before reporting
    throw err;
  }

  async function* records(): AsyncGenerator<unknown> {
    let block = 0;
    let record = 0;
    const where = () => `block ${block} (record ${record})`;
    try {
      for (;; block++) {
        pos = await fill(pos, 20);
        if (pos === buf.length && eof) return;
        let n: number;
        let bytes: number;
        let dataStart: number;
        try {
          const count = readLong(buf, pos, buf.length);
          const size = count.offset === NEED_MORE ? count : readLong(buf, count.offset, buf.length);
          if (size.offset === NEED_MORE) throw new AvroBoundsError("file ends inside a block header");
          n = count.value;
          bytes = size.value;
          if (n < 0 || bytes < 0) throw new AvroBoundsError("negative block count or size");
          if (bytes > limits.memoryBudgetBytes) throw new AvroBoundsError(`block of ${bytes} bytes exceeds the read budget of ${limits.memoryBudgetBytes} bytes (FARM_TRAJECTORY_READ_BUDGET_MB)`);
          dataStart = size.offset - pos;
        } catch (err) {
          throw corrupt(file, `block ${block}: ${reason(err)}`);
        }
        pos = await fill(pos, dataStart + bytes + SYNC_BYTES);
        dataStart += pos;
        if (buf.length < dataStart + bytes + SYNC_BYTES) throw corrupt(file, `block ${block}: file ends inside a block (truncated)`);
        if (!buf.subarray(dataStart + bytes, dataStart + bytes + SYNC_BYTES).equals(sync)) throw corrupt(file, `block ${block}: bad sync marker`);
        let data: Buffer;
        try {
          data = await codec.decompress(buf.subarray(dataStart, dataStart + bytes), limits.memoryBudgetBytes);
        } catch (err) {
          throw corrupt(file, `block ${block}: ${reason(err)}`, err);
        }
        pos = dataStart + bytes + SYNC_BYTES;
        // Every record of a farm schema takes at least one byte; a larger count cannot be real.
        if (n > data.length) throw corrupt(file, `block ${block}: declares ${n} records in ${data.length} bytes`);
        const budget = { zeroSizeItems: limits.maxZeroSizeItems };
        let at = 0;
        for (let i = 0; i < n; i++, record++) {
          let r: { value: unknown; offset: number };
          try {
            // Check every declared size first: avsc's decoder trusts them and loops or allocates on garbage.
            const end = checkAvroDatum(schema.writerType, data, at, data.length, budget);
            r = schema.decode(data, at);
            if (r.offset !== end) throw new AvroBoundsError("record does not decode to the length its schema implies");
          } catch (err) {
            throw corrupt(file, `${where()}: ${reason(err)}`, err);
          }
          at = r.offset;
          yield r.value;
        }
        if (at !== data.length) throw corrupt(file, `block ${block}: block has bytes after its last record`);
      }
    } finally {
      await release();
    }
  }
  return { info: info!, records: records() };
}

export { AvroBoundsError };
