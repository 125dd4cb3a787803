/**
 * A Parquet file written one row group at a time (`parquet-wasm`'s streaming writer), so the Arrow copy,
 * the wasm memory and the output bytes hold one row group, not the file. Every `write` must carry exactly `rowGroupRows` rows (the last may carry fewer):
 * the writer closes a row group per write, so after `settle()` `bytesWritten` covers every row written.
 *
 *   const w = ParquetStreamWriter.open(file, { compression: "zstd", rowGroupRows: 512 });
 *   await w.write(tableOf512Rows);   // returns once the row group is encoded and its bytes counted
 *   const bytes = await w.close();   // footer written, file fsync'd
 */
import { open, type FileHandle } from "node:fs/promises";
import type * as arrow from "apache-arrow";
import { apacheArrow, buildTable } from "./arrow-table.ts";
import { codec, parquetBytes, parquetWasm, writeFileSynced, type ParquetWriteOptions } from "./parquet-file.ts";

type WasmBatch = import("parquet-wasm/node").RecordBatch;

export class ParquetStreamWriter {
  private readonly queue: WasmBatch[] = [];
  private ended = false;
  /** The writer waits for its next batch (queue empty): everything handed over has been encoded. */
  private waiting = false;
  private wake: (() => void) | undefined;
  private onIdle: (() => void) | undefined;
  private readonly done: Promise<void>;
  private failure: Error | undefined;
  private bytes = 0;
  /** File writes run behind the counting, so a slow disk never hides a row group's bytes from `settle`. */
  private writing: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly file: FileHandle,
    o: ParquetWriteOptions,
  ) {
    const pq = parquetWasm();
    const source = new ReadableStream<WasmBatch>({ pull: (c) => this.pull(c) }, { highWaterMark: 0 });
    const props = new pq.WriterPropertiesBuilder()
      .setCompression(codec(o.compression) as never)
      .setMaxRowGroupSize(o.rowGroupRows)
      // Min/max of frame bytes are useless and, per page and row group, make the footer grow with the file.
      .setColumnStatisticsEnabled("screenshot.bytes", pq.EnabledStatistics.None)
      .setColumnStatisticsEnabled("screenshots.list.item.bytes", pq.EnabledStatistics.None)
      .build();
    // The writer reads the first batch before it resolves, so this is not awaited here.
    this.done = pq.transformParquetStream(source, props).then(async (out: ReadableStream<Uint8Array>) => {
      for await (const chunk of out as unknown as AsyncIterable<Uint8Array>) {
        this.bytes += chunk.byteLength;
        this.writing = this.writing.then(() => this.file.write(chunk));
      }
      await this.writing;
    });
    this.done.catch((e: unknown) => {
      this.failure = e instanceof Error ? e : new Error(`Parquet writer failed: ${String(e)}`);
      this.onIdle?.();
    });
  }

  static async open(path: string, o: ParquetWriteOptions): Promise<ParquetStreamWriter> {
    return new ParquetStreamWriter(await open(path, "w"), o);
  }

  /** Bytes of the row groups encoded so far (plus the leading magic). */
  get bytesWritten(): number {
    return this.bytes;
  }

  /** Hands one row group to the writer and waits until it is encoded and its bytes are counted. */
  async write(table: arrow.Table): Promise<void> {
    if (table.numRows === 0) return;
    const wasm = parquetWasm().Table.fromIPCStream(apacheArrow().tableToIPC(table, "stream"));
    for (let i = 0; i < wasm.numBatches; i++) this.queue.push(wasm.recordBatch(i)!);
    this.wake?.();
    await this.settle();
  }

  /** Writes the footer, fsyncs and closes the file; the file's size in bytes. */
  async close(): Promise<number> {
    this.ended = true;
    this.wake?.();
    try {
      await this.done;
      await this.file.sync();
    } finally {
      await this.file.close();
    }
    return this.bytes;
  }

  /** Stops without a valid file (the caller deletes it). */
  async abort(): Promise<void> {
    this.ended = true;
    this.queue.length = 0;
    this.wake?.();
    await this.done.catch(() => undefined);
    await this.file.close().catch(() => undefined);
  }

  private async pull(c: ReadableStreamDefaultController<WasmBatch>): Promise<void> {
    while (this.queue.length === 0 && !this.ended) {
      this.waiting = true;
      this.onIdle?.();
      await new Promise<void>((r) => (this.wake = r));
    }
    this.waiting = false;
    const next = this.queue.shift();
    if (next) c.enqueue(next);
    else c.close();
  }

  private async settle(): Promise<void> {
    while (!(this.queue.length === 0 && this.waiting) && !this.failure) await new Promise<void>((r) => (this.onIdle = r));
    if (this.failure) throw this.failure;
    // The row group's bytes reach the output stream in the same turn the writer asks for more; let the
    // reader loop count them.
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    await this.writing; // one row group in memory at a time
  }
}

/** Uncompressed bytes per row group (the writer's memory): rows × their average bound, at most this. */
const ROW_GROUP_BUDGET = 8e6;

/**
 * Writes a shard's step rows (column-wise values) to `file` in row groups of at most `rowGroupRows` rows
 * and about `ROW_GROUP_BUDGET` bytes; returns the file's size.
 */
export async function writeSteps(
  file: string,
  schema: arrow.Schema,
  rows: { steps: unknown[][]; stepRows: number; boundBytes: number },
  o: ParquetWriteOptions,
): Promise<number> {
  const n = rows.stepRows;
  if (n === 0) {
    // The streaming writer needs a first batch; an empty table is written whole.
    const bytes = parquetBytes(buildTable(schema, rows.steps), o);
    await writeFileSynced(file, bytes);
    return bytes.byteLength;
  }
  const perRow = Math.max(1, rows.boundBytes / n);
  const groupRows = Math.max(1, Math.min(o.rowGroupRows, Math.floor(ROW_GROUP_BUDGET / perRow)));
  const writer = await ParquetStreamWriter.open(file, { ...o, rowGroupRows: groupRows });
  try {
    for (let at = 0; at < n; at += groupRows) await writer.write(buildTable(schema, rows.steps.map((col) => col.slice(at, at + groupRows))));
  } catch (err) {
    await writer.abort();
    throw err;
  }
  return writer.close();
}
