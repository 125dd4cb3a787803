/**
 * The errors of @farm/task-protocol. Every message starts with `task server <url> <class>` and is short and
 * printable (what a task server sent passes through `terminalSafe` and is cut), so it can go into an episode's
 * `score_error` / reset failure as it is.
 *
 *   bad_ref (not retryable)        the family's task_server entry cannot be used (URL, class, timeout)
 *   url_not_allowed                 the host (or an address it resolves to) is not loopback nor on the allow-list
 *   unreachable (retryable)         connection refused / reset / DNS failure / connection closed mid-answer
 *   timeout (retryable)             an exchange, a device call or the whole phase passed its deadline
 *   http_status                     a non-2xx answer (its `error.message` quoted); retryable for 408, 429, 5xx
 *   bad_answer                      not JSON, too large, or not what the protocol allows (field named)
 *   too_many_calls                  more device calls in one phase than allowed
 *   refused_call                    a device call the farm does not carry out (DeviceCallRefusedError)
 *   task_failed                     the task code raised (TaskCodeError: its type and message)
 *   state / aborted / closed        the instance was used out of order / the caller's signal fired / close() was called
 */
import { FarmError } from "@farm/errors";

export type TaskProtocolErrorCode =
  | "bad_ref"
  | "url_not_allowed"
  | "unreachable"
  | "timeout"
  | "http_status"
  | "bad_answer"
  | "too_many_calls"
  | "refused_call"
  | "task_failed"
  | "state"
  | "aborted"
  | "closed";

/** Codes a later try of the same episode can get past (the server or the network was briefly away). */
const RETRYABLE = new Set<TaskProtocolErrorCode>(["unreachable", "timeout"]);

export class TaskProtocolError extends FarmError<TaskProtocolErrorCode> {
  override readonly name: string = "TaskProtocolError";
  constructor(code: TaskProtocolErrorCode, message: string, opts: { cause?: unknown; retryable?: boolean } = {}) {
    super(code, message, { cause: opts.cause, retryable: opts.retryable ?? RETRYABLE.has(code) });
  }
}

/** A device call the farm does not carry out (it would reach outside the episode's device); ends the phase. */
export class DeviceCallRefusedError extends TaskProtocolError {
  override readonly name = "DeviceCallRefusedError";
  /** the same task code asks the same again: not retryable. */
  constructor(message: string, readonly command: string) {
    super("refused_call", message, { retryable: false });
  }
}

/** The task code raised (its exception's type and message, as the task server reported them). */
export class TaskCodeError extends TaskProtocolError {
  override readonly name = "TaskCodeError";
  /** task code is deterministic for an episode's parameters: not retryable. */
  constructor(message: string, readonly errorType: string) {
    super("task_failed", message, { retryable: false });
  }
}
