/**
 * Errors with stable codes. A worker that refuses a job throws `JobRejectedError`, which BullMQ treats as
 * unrecoverable (no retry); its message starts with `[CODE]` so the scheduler can read the cause back
 * from the job's `failedReason`, the only thing that survives the trip through Redis.
 */
import { UnrecoverableError } from "bullmq";
import { FarmError } from "@farm/errors";

export type QueueErrorCode =
  /** REDIS_URL (or a given URL) cannot be used. */
  | "REDIS_URL_INVALID"
  /** Redis refused the credentials or an ACL denies a command the farm needs (fatal at start-up). */
  | "REDIS_ACCESS_DENIED"
  /** Redis does not answer. */
  | "REDIS_UNAVAILABLE"
  /** A job's data does not match `EpisodeJobData`. */
  | "JOB_PAYLOAD_INVALID"
  /** A job id is not `<campaignId>-<index>`. */
  | "JOB_ID_INVALID"
  /** A job result does not match `EpisodeJobResult`. */
  | "JOB_RESULT_INVALID"
  /** The job names a task id the worker's task folder does not have. */
  | "TASK_UNKNOWN"
  /** The worker has the task id but its content hash differs from the job's. */
  | "TASK_HASH_MISMATCH"
  /** A campaign id is malformed. */
  | "CAMPAIGN_ID_INVALID"
  // ---- set by a worker's processor (the scheduler's summary groups failed jobs by them) ----
  /** The job's policy names a scripted/module policy the worker's policy folder does not have. Not retried. */
  | "POLICY_UNKNOWN"
  /** The job's policy spec cannot be turned into a policy. Not retried. */
  | "POLICY_INVALID"
  /** The task cannot run on any device (e.g. an APK of an install step is in no APK folder). Not retried. */
  | "TASK_NOT_RUNNABLE"
  /** A `human` episode's operator left or idled (campaign setting onAbandon: retry): retried for another operator. */
  | "OPERATOR_ABANDONED"
  /** The episode was truncated by device trouble (reset/action/observation failed, hung, lost). Retried. */
  | "DEVICE_TROUBLE"
  /** The device cannot run episodes (recovery budget spent, or being unbound). Retried, elsewhere. */
  | "DEVICE_UNUSABLE"
  /** The policy threw or timed out during the episode. Retried. */
  | "POLICY_FAILED"
  /** The episode was cancelled (not by a drain, which hands the job back without failing it). */
  | "CANCELLED"
  /** The worker lost the job's lock (it stalled past the lock duration): another attempt owns the episode. */
  | "LOCK_LOST";

/** An error in this library's domain. `retryable` says whether trying again could help. */
export class QueueError extends FarmError<QueueErrorCode> {
  override readonly name = "QueueError";
  constructor(code: QueueErrorCode, message: string, retryable = false) {
    super(code, message, { retryable });
  }
}

/**
 * Thrown from a worker's processor to fail a job at once, without retries.
 * Extends BullMQ's `UnrecoverableError` (BullMQ checks `instanceof` or the name, so the name is kept).
 */
export class JobRejectedError extends UnrecoverableError {
  /** Rejected jobs are never retried (BullMQ's UnrecoverableError). */
  readonly retryable = false;
  constructor(
    readonly code: QueueErrorCode,
    detail: string,
  ) {
    super(formatFailureReason(code, detail));
    this.name = "UnrecoverableError";
  }

  static from(err: QueueError): JobRejectedError {
    return new JobRejectedError(err.code, err.message);
  }
}

/** `[CODE] detail` — the shape of a failedReason that carries a stable code. */
export function formatFailureReason(code: QueueErrorCode, detail: string): string {
  return `[${code}] ${detail}`;
}

/**
 * The stable code at the start of a failedReason, or "error" when there is none (an ordinary exception
 * that exhausted its retries). Only `[A-Z_]` codes are accepted so the value is safe as a metric label.
 */
export function failureCodeOf(failedReason: string | undefined): string {
  const m = /^\[([A-Z][A-Z0-9_]{0,63})\]/.exec(failedReason ?? "");
  return m?.[1] ?? "error";
}
