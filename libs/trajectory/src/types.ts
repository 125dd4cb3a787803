import type { EpisodeTrajectory } from "@farm/episode";
import type { Dialect } from "@farm/task";
import { FarmError } from "@farm/errors";

/** What the worker hands to the writer: the job identity plus the runner's trajectory. */
export interface EpisodeRecord extends EpisodeTrajectory {
  /** `episodeIdOf(campaignId, episodeIndex)`; the key for duplicate detection. */
  episodeId: string;
  campaignId: string;
  episodeIndex: number;
  /** 1-based attempt of the episode job. */
  attempt: number;
  /** Worker (host/process) that ran the episode. */
  worker: string;
  taskDialect?: Dialect;
  /**
   * The frame cadence the episode was run with (the job's option): when set it wins over the writer's
   * `frameEvery`, so frames a job asked for are kept. 0 = drop all frames.
   */
  frameEvery?: number;
}

/** A record as read back, with where it came from. */
export interface StoredEpisode extends EpisodeRecord {
  schemaVersion: number;
  /** 0 = no frames were kept; k = frames on steps whose index is a multiple of k. */
  frameEvery: number;
  /** The file it was read from. */
  file: string;
}

export type CodecName = "null" | "deflate" | "snappy";
export const CODEC_NAMES: readonly CodecName[] = ["null", "deflate", "snappy"];

export type TrajectoryErrorCode =
  | "invalid_options"
  | "invalid_record"
  | "writer_closed"
  | "writer_failed"
  | "corrupt_file"
  | "unsupported_codec";

/** Errors carry a stable code and whether retrying the same call can help. */
export class TrajectoryError extends FarmError<TrajectoryErrorCode> {
  constructor(code: TrajectoryErrorCode, message: string, retryable = false, options?: { cause?: unknown }) {
    super(code, message, { retryable, ...(options?.cause !== undefined ? { cause: options.cause } : {}) });
    this.name = "TrajectoryError";
  }
}
