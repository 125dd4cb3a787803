/** Scheduler errors with stable codes; the HTTP layer maps each code to one status. */
import { FarmError } from "@farm/errors";

export type SchedulerErrorCode =
  /** The campaign spec (or another request) is malformed. */
  | "SPEC_INVALID"
  /** The task id is not in the scheduler's task folders. */
  | "TASK_UNKNOWN"
  /** The spec names a task hash that differs from the scheduler's copy of the task. */
  | "TASK_HASH_MISMATCH"
  /** A campaign with this id exists with a different spec. */
  | "CAMPAIGN_CONFLICT"
  | "CAMPAIGN_NOT_FOUND"
  /** A policy version that would go back (below the current one, or raised before). */
  | "VERSION_CONFLICT"
  /** Redis cannot be reached (at start-up, or while an API call waits). */
  | "REDIS_UNAVAILABLE"
  /** Redis refused the credentials or an ACL denies a command (fatal at start-up). */
  | "REDIS_ACCESS_DENIED"
  /** The scheduler is closed. */
  | "CLOSED";

export const HTTP_STATUS_OF: Record<SchedulerErrorCode, number> = {
  SPEC_INVALID: 400,
  TASK_UNKNOWN: 422,
  TASK_HASH_MISMATCH: 422,
  CAMPAIGN_CONFLICT: 409,
  CAMPAIGN_NOT_FOUND: 404,
  VERSION_CONFLICT: 409,
  REDIS_UNAVAILABLE: 503,
  REDIS_ACCESS_DENIED: 503,
  CLOSED: 503,
};

/** Codes that may clear up by themselves (Redis back, a scheduler restarted): the caller may try again. */
const RETRYABLE: ReadonlySet<SchedulerErrorCode> = new Set<SchedulerErrorCode>(["REDIS_UNAVAILABLE", "CLOSED"]);

export class SchedulerError extends FarmError<SchedulerErrorCode> {
  override readonly name = "SchedulerError";
  constructor(code: SchedulerErrorCode, message: string) {
    super(code, message, { retryable: RETRYABLE.has(code) });
  }
}
