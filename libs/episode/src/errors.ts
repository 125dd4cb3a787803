/**
 * Errors that are not device trouble. Device trouble never throws out of the runner: it becomes an episode
 * truncation with a cause. These mean the caller must stop: the task cannot run anywhere, or the device was
 * already reported unusable.
 */

import type { StepResult } from "@farm/adb";
import { FarmError, coerceError } from "@farm/errors";

export { coerceError };

const BRAND = Symbol.for("@farm/episode/error");

export type EpisodeErrorCode = "task_not_runnable" | "device_unusable" | "session_closed" | "invalid_result";

export class EpisodeError extends FarmError<EpisodeErrorCode> {
  readonly [BRAND] = true;
  constructor(
    code: EpisodeErrorCode,
    message: string,
    /** Whether running the same job again (elsewhere) can help. */
    retryable: boolean,
  ) {
    super(code, message, { retryable });
    this.name = "EpisodeError";
  }
  /** Safe across copies of this module (a brand, not identity). */
  static is(e: unknown): e is EpisodeError {
    return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
  }
}

/** The task itself cannot run (e.g. an mpm APK that is not in the APK folders). Unrecoverable: do not retry. */
export class TaskNotRunnableError extends EpisodeError {
  constructor(message: string) {
    super("task_not_runnable", message, false);
    this.name = "TaskNotRunnableError";
  }
}

/** The device was reported unusable (recovery budget spent); another device may run the job. */
export class DeviceUnusableError extends EpisodeError {
  constructor(serial: string, reason: string) {
    super("device_unusable", `device ${serial} is unusable: ${reason}`, true);
    this.name = "DeviceUnusableError";
  }
}

/** A device call that threw, as the failed StepResult the adb driver returns (device trouble is data). */
export function adbErrorResult(e: unknown): StepResult {
  return { status: "adb_error", message: coerceError(e).message, output: "", durationMs: 0 };
}
