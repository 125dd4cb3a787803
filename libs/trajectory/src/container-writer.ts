/**
 * One container file being written under a temporary name. Records arrive already encoded; they are
 * gathered into blocks of ~blockBytes, compressed and written while the next block fills (at most one
 * block in flight, so memory stays at about two blocks plus one record). `finish` flushes, fsyncs,
 * renames into place and fsyncs the folder: readers either see a complete file or none (`seal` stops
 * before the rename, for callers that publish differently).
 */
import { createHash, randomBytes, type Hash } from "node:crypto";
import { open, rename, unlink, type FileHandle } from "node:fs/promises";
import path from "node:path";
import type { BlockCodec } from "./block-codecs.ts";
import { encodeBlockPrefix, headerType, MAGIC, SYNC_BYTES } from "./container-format.ts";

export interface ContainerFileOptions {
  tmpPath: string;
  finalPath: string;
  schemaJson: string;
  codecName: string;
  codec: BlockCodec;
  /** Extra header metadata (UTF-8 values). */
  meta: Record<string, string>;
  blockBytes: number;
  /** Keep a SHA-256 of the bytes as written (`sha256()` after seal), so nobody has to read the file back for it. */
  checksum?: boolean;
}

export class ContainerFileWriter {
  records = 0;
  /** Bytes already handed to the OS. */
  bytesOnDisk = 0;
  private block: Buffer;
  private blockPos = 0;
  private blockCount = 0;
  /** Uncompressed bytes of the block being compressed/written. */
  private inflightBytes = 0;
  private inflight: Promise<void> = Promise.resolve();
  private failure: unknown;
  private finished = false;
  private readonly hash: Hash | undefined;

  private constructor(
    private readonly fh: FileHandle,
    private readonly sync: Buffer,
    private readonly opts: ContainerFileOptions,
  ) {
    this.block = Buffer.allocUnsafe(opts.blockBytes);
    this.hash = opts.checksum ? createHash("sha256") : undefined;
  }

  /** Creates the temporary file (failing if it exists) and writes the header. */
  static async create(opts: ContainerFileOptions): Promise<ContainerFileWriter> {
    const fh = await open(opts.tmpPath, "wx");
    const sync = randomBytes(SYNC_BYTES);
    const meta: Record<string, Buffer> = {
      "avro.schema": Buffer.from(opts.schemaJson, "utf8"),
      "avro.codec": Buffer.from(opts.codecName, "utf8"),
    };
    for (const [k, v] of Object.entries(opts.meta)) meta[k] = Buffer.from(v, "utf8");
    const header = headerType.toBuffer({ magic: MAGIC, meta, sync });
    const w = new ContainerFileWriter(fh, sync, opts);
    try {
      w.hash?.update(header);
      await fh.write(header, 0, header.length, null);
    } catch (err) {
      await w.abandon();
      throw err;
    }
    w.bytesOnDisk = header.length;
    return w;
  }

  get tmpPath(): string {
    return this.opts.tmpPath;
  }
  get finalPath(): string {
    return this.opts.finalPath;
  }

  /** Size the file would have if finished now, counting pending data uncompressed (an upper bound for deflate/snappy text). */
  estimatedBytes(): number {
    const pending = this.blockCount > 0 ? this.blockPos + 20 + SYNC_BYTES : 0;
    return this.bytesOnDisk + this.inflightBytes + pending;
  }

  /** Copies one encoded record into the current block; resolves once the previous block is on its way (backpressure). */
  async append(encoded: Buffer): Promise<void> {
    this.throwIfFailed();
    if (this.blockPos + encoded.length > this.block.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.block.length * 2, this.blockPos + encoded.length));
      this.block.copy(grown, 0, 0, this.blockPos);
      this.block = grown;
    }
    encoded.copy(this.block, this.blockPos);
    this.blockPos += encoded.length;
    this.blockCount++;
    this.records++;
    if (this.blockPos >= this.opts.blockBytes) {
      await this.inflight;
      this.throwIfFailed();
      this.startBlockFlush();
    }
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  /** Hands the current block to the codec and the file; the returned work is tracked in `inflight`. */
  private startBlockFlush(): void {
    if (this.blockCount === 0) return;
    const data = this.block.subarray(0, this.blockPos);
    const count = this.blockCount;
    this.block = Buffer.allocUnsafe(this.opts.blockBytes);
    this.blockPos = 0;
    this.blockCount = 0;
    const previous = this.inflight;
    this.inflightBytes = data.length;
    this.inflight = (async () => {
      await previous;
      const body = await this.opts.codec.compress(data);
      const parts = [encodeBlockPrefix(count, body.length), body, this.sync];
      for (const part of parts) this.hash?.update(part); // blocks are written one after another, in this order
      const { bytesWritten } = await this.fh.writev(parts);
      const expected = parts.reduce((n, b) => n + b.length, 0);
      if (bytesWritten !== expected) throw new Error(`short write: ${bytesWritten} of ${expected} bytes`);
      this.bytesOnDisk += bytesWritten;
      this.inflightBytes = 0;
    })();
    // Remember the failure; it is reported by the next append or by finish (never as an unhandled rejection).
    this.inflight.catch((err: unknown) => {
      this.failure ??= err;
    });
  }

  /** Writes what is left, fsyncs, closes and renames into place. Returns the final size in bytes. */
  async finish(): Promise<number> {
    const bytes = await this.seal();
    await rename(this.opts.tmpPath, this.opts.finalPath);
    await fsyncDir(path.dirname(this.opts.finalPath));
    return bytes;
  }

  /**
   * Writes what is left, fsyncs and closes, leaving the complete file under its temporary name for the
   * caller to publish (writeEpisodeFile links it instead of renaming). Returns its size in bytes.
   */
  async seal(): Promise<number> {
    if (this.finished) throw new Error("container file already finished");
    this.finished = true;
    try {
      this.startBlockFlush();
      await this.inflight;
      await this.fh.sync();
      await this.fh.close();
    } catch (err) {
      await this.abandon();
      throw err;
    }
    return this.bytesOnDisk;
  }

  /** `sha256:<hex>` of the file's bytes, after seal, when created with `checksum`. */
  sha256(): string | undefined {
    return this.hash && `sha256:${this.hash.digest("hex")}`;
  }

  /** Gives up on the file: closes it and removes the temporary name. Never throws. */
  async abandon(): Promise<void> {
    this.finished = true;
    await this.inflight.catch(() => undefined);
    await this.fh.close().catch(() => undefined);
    await unlink(this.opts.tmpPath).catch(() => undefined);
  }
}

/** Makes a rename durable: the folder entry itself must reach the disk. */
export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, "r");
  try {
    await fh.sync();
  } catch (err) {
    // Some filesystems refuse fsync on folders; the rename itself is still atomic there.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EINVAL" && code !== "EISDIR" && code !== "ENOTSUP" && code !== "EPERM" && code !== "EBADF") throw err;
  } finally {
    await fh.close();
  }
}
