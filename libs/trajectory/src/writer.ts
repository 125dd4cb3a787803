/**
 * TrajectoryWriter: appends episode records to Avro container files laid out by partition, rotating by
 * size and episode count. A file becomes visible only when complete (temporary name → fsync → rename).
 * An episode is durable once the file holding it is closed: `onFileClosed` lists its episode ids, so a
 * caller can acknowledge work only then.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { ContainerFileWriter } from "./container-writer.ts";
import { framesKept } from "./episode-codec.ts";
import { finalFileName, isValidWriterId, nextSequence, partitionDate, partitionDir, tempFileName } from "./partition.ts";
import { episodeFileHeader, RecordEncoder } from "./record-encoding.ts";
import { CODEC_NAMES, TrajectoryError, type CodecName, type EpisodeRecord } from "./types.ts";
import { coerceError } from "@farm/errors";

export interface TrajectoryWriterOptions {
  outDir: string;
  /** Names this writer's files; must be unique among concurrent writers of one outDir. [A-Za-z0-9][A-Za-z0-9_.-]* */
  writerId: string;
  codec?: CodecName;
  /** Start a new file before one would exceed this (a single larger episode still gets its own file). Default 128 MiB. */
  maxFileBytes?: number;
  /** Close a file once it holds this many episodes. Default 10 000. */
  maxEpisodesPerFile?: number;
  /**
   * For records without their own `frameEvery`: 0 = never store frames; k = store the frame of steps whose
   * 1-based index is a multiple of k. Default 0.
   */
  frameEvery?: number;
  /** Uncompressed bytes gathered before a block is compressed and written. Default 64 KiB. */
  blockBytes?: number;
  /** Partitions with an open file at once; the least recently used is closed beyond it. Default 4. */
  maxOpenFiles?: number;
  /**
   * Close a file this long after it was opened, even if the writer is idle, so episodes become visible
   * (and acknowledgeable) within a bounded time on slow workers. Default 10 minutes.
   */
  maxFileAgeMs?: number;
  /** Called after each file is renamed into place (for metrics and acknowledgements). */
  onFileClosed?: (file: ClosedTrajectoryFile) => void;
}

export interface ClosedTrajectoryFile {
  path: string;
  taskId: string;
  date: string;
  episodes: number;
  bytes: number;
  episodeIds: string[];
}

export interface TrajectoryWriterStats {
  episodesAppended: number;
  framesAppended: number;
  filesClosed: number;
  /** Bytes of closed (visible) files. */
  bytesClosed: number;
  /** Files currently being written. */
  openFiles: number;
}

interface OpenFile {
  writer: ContainerFileWriter;
  taskId: string;
  date: string;
  episodeIds: string[];
  openedAtMs: number;
}

type Config = Required<Omit<TrajectoryWriterOptions, "onFileClosed">> & Pick<TrajectoryWriterOptions, "onFileClosed">;

function configFrom(o: TrajectoryWriterOptions): Config {
  const c: Config = {
    outDir: o.outDir,
    writerId: o.writerId,
    codec: o.codec ?? "deflate",
    maxFileBytes: o.maxFileBytes ?? 128 * 1024 * 1024,
    maxEpisodesPerFile: o.maxEpisodesPerFile ?? 10_000,
    frameEvery: o.frameEvery ?? 0,
    blockBytes: o.blockBytes ?? 64 * 1024,
    maxOpenFiles: o.maxOpenFiles ?? 4,
    maxFileAgeMs: o.maxFileAgeMs ?? 10 * 60 * 1000,
    onFileClosed: o.onFileClosed,
  };
  const bad = (why: string) => new TrajectoryError("invalid_options", `TrajectoryWriter: ${why}`);
  if (!c.outDir) throw bad("outDir is required");
  if (!isValidWriterId(c.writerId)) throw bad(`writerId ${JSON.stringify(c.writerId)} must match [A-Za-z0-9][A-Za-z0-9_.-]*`);
  if (!CODEC_NAMES.includes(c.codec)) throw bad(`codec must be one of ${CODEC_NAMES.join(", ")}`);
  for (const k of ["maxFileBytes", "maxEpisodesPerFile", "blockBytes", "maxOpenFiles", "maxFileAgeMs"] as const) {
    if (!Number.isSafeInteger(c[k]) || c[k] < 1) throw bad(`${k} must be a positive integer`);
  }
  if (!Number.isSafeInteger(c.frameEvery) || c.frameEvery < 0) throw bad("frameEvery must be 0 (never) or a positive integer");
  return c;
}

export class TrajectoryWriter {
  readonly stats: TrajectoryWriterStats = { episodesAppended: 0, framesAppended: 0, filesClosed: 0, bytesClosed: 0, openFiles: 0 };
  private readonly encoder = new RecordEncoder();
  /** Open files by partition folder, least recently used first. */
  private readonly open = new Map<string, OpenFile>();
  private readonly nextSeq = new Map<string, number>();
  /** Appends run one after another in call order. */
  private tail: Promise<void> = Promise.resolve();
  private failure: unknown;
  private closing: Promise<void> | undefined;
  private readonly ageTimer: NodeJS.Timeout;

  private constructor(private readonly config: Config) {
    // Checks file ages while idle; unref'd so an idle writer never keeps the process alive.
    this.ageTimer = setInterval(() => this.closeOldFiles(), Math.max(10, Math.min(config.maxFileAgeMs / 4, 30_000)));
    this.ageTimer.unref();
  }

  static async open(options: TrajectoryWriterOptions): Promise<TrajectoryWriter> {
    const config = configFrom(options);
    await mkdir(config.outDir, { recursive: true });
    return new TrajectoryWriter(config);
  }

  /**
   * Adds one episode. Await it before the next append: it resolves once the record is buffered and the
   * previous block has been written (backpressure), or after a file was closed by rotation.
   */
  append(record: EpisodeRecord): Promise<void> {
    if (this.closing) return Promise.reject(new TrajectoryError("writer_closed", "TrajectoryWriter is closed"));
    const run = this.tail.then(() => this.appendNow(record));
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Finishes every open file (fsync + rename). Idempotent; later appends are rejected. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.ageTimer);
      await this.tail;
      const errors: unknown[] = [];
      for (const key of [...this.open.keys()]) {
        try {
          await this.finishFile(key);
        } catch (err) {
          errors.push(err);
        }
      }
      if (errors.length === 1) throw errors[0];
      if (errors.length > 1) throw new AggregateError(errors, "TrajectoryWriter: several files failed to close");
    })();
    return this.closing;
  }

  /** Queues the closing of files older than maxFileAgeMs behind pending appends. */
  private closeOldFiles(): void {
    if (this.closing || this.failure !== undefined) return;
    const now = Date.now();
    const old = [...this.open].filter(([, f]) => now - f.openedAtMs >= this.config.maxFileAgeMs).map(([dir]) => dir);
    if (old.length === 0) return;
    this.tail = this.tail.then(async () => {
      try {
        for (const dir of old) await this.finishFile(dir);
      } catch (err) {
        this.failure ??= err; // reported by the next append
      }
    });
  }

  private async appendNow(record: EpisodeRecord): Promise<void> {
    if (this.failure !== undefined) {
      throw new TrajectoryError("writer_failed", "TrajectoryWriter failed earlier; episodes not in a closed file were not stored", false, { cause: this.failure });
    }
    // Encode first: an invalid record fails here without touching any file.
    const encoded = this.encoder.encode(record, this.config.frameEvery);
    const dir = partitionDir(this.config.outDir, record.taskId, record.startedAt);
    try {
      let file = this.open.get(dir);
      if (file && file.writer.records > 0 && file.writer.estimatedBytes() + encoded.length + 64 > this.config.maxFileBytes) {
        await this.finishFile(dir);
        file = undefined;
      }
      file ??= await this.openFile(dir, record);
      // Most recently used goes last.
      this.open.delete(dir);
      this.open.set(dir, file);
      await file.writer.append(encoded);
      file.episodeIds.push(record.episodeId);
      this.stats.episodesAppended++;
      this.stats.framesAppended += framesKept(record, this.config.frameEvery);
      if (file.writer.records >= this.config.maxEpisodesPerFile || file.writer.estimatedBytes() >= this.config.maxFileBytes) {
        await this.finishFile(dir);
      }
    } catch (err) {
      this.failure = err;
      throw new TrajectoryError("writer_failed", `TrajectoryWriter: ${coerceError(err).message}`, false, { cause: err });
    }
  }

  private async openFile(dir: string, record: EpisodeRecord): Promise<OpenFile> {
    while (this.open.size >= this.config.maxOpenFiles) {
      const lru = this.open.keys().next().value as string;
      await this.finishFile(lru);
    }
    await mkdir(dir, { recursive: true });
    const seq = this.nextSeq.get(dir) ?? (await nextSequence(dir, this.config.writerId));
    this.nextSeq.set(dir, seq + 1);
    const writer = await ContainerFileWriter.create({
      tmpPath: path.join(dir, tempFileName(this.config.writerId, seq)),
      finalPath: path.join(dir, finalFileName(this.config.writerId, seq)),
      ...episodeFileHeader(this.config.codec, this.config.writerId, this.config.frameEvery),
      blockBytes: this.config.blockBytes,
    });
    this.stats.openFiles++;
    return { writer, taskId: record.taskId, date: partitionDate(record.startedAt), episodeIds: [], openedAtMs: Date.now() };
  }

  private async finishFile(dir: string): Promise<void> {
    const file = this.open.get(dir);
    if (!file) return;
    this.open.delete(dir);
    this.stats.openFiles--;
    const bytes = await file.writer.finish();
    this.stats.filesClosed++;
    this.stats.bytesClosed += bytes;
    try {
      this.config.onFileClosed?.({
        path: file.writer.finalPath,
        taskId: file.taskId,
        date: file.date,
        episodes: file.writer.records,
        bytes,
        episodeIds: file.episodeIds,
      });
    } catch (err) {
      // The file is safely in place; a failing listener must not fail the writer.
      process.emitWarning(`TrajectoryWriter onFileClosed listener threw: ${coerceError(err).message}`);
    }
  }
}
