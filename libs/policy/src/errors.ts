/**
 * The one error type policies throw. `code` is stable (callers and metrics branch on it);
 * `retryable` says whether trying the same call again can help.
 */

import { FarmError } from "@farm/errors";

export type PolicyErrorCode =
  /** The remote policy did not answer within its timeout. */
  | "timeout"
  /** The remote policy answered with a non-2xx status. */
  | "http_status"
  /** The remote policy answered 2xx with a body that is not a valid action. */
  | "bad_response"
  /** The remote policy's server could not be reached (refused, DNS, reset). */
  | "unreachable"
  /** The remote policy's host (or an address it resolves to) is not in the allow-list. */
  | "url_not_allowed"
  /** The caller aborted `act` (e.g. the episode was cancelled). */
  | "aborted"
  /** A `--policy` spec string could not be parsed. */
  | "bad_spec"
  /** A scripted-policy file is missing or holds an invalid action. */
  | "bad_script"
  /** A module-policy file could not be imported or does not export a policy. */
  | "bad_module"
  /** A module policy returned an invalid action or threw. */
  | "bad_action"
  /** `act` was called after `close`. */
  | "closed"
  /** A batched remote policy answered the batch but reported an error for this device's item. */
  | "server_error"
  /** The `human` policy's operator left past the grace period, idled past the limit, or none came in time. */
  | "operator_abandoned";

export class PolicyError extends FarmError<PolicyErrorCode> {
  override readonly name = "PolicyError";
  /** http_status: the server's Retry-After in ms, when it sent one (a caller that retries waits that long, bounded). */
  retryAfterMs?: number;
  /** http_status: the status the server answered. */
  httpStatus?: number;
}

export function isPolicyError(e: unknown): e is PolicyError {
  return e instanceof PolicyError;
}
