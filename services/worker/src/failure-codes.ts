/**
 * The one mapping from what went wrong in an episode job to the queue code its failure carries (the
 * `[CODE]` at the start of BullMQ's failedReason, the retry metric's label, the campaign's failure groups).
 * Written once here, as tables and small functions, and tested (test/failure-codes.test.ts); the processor,
 * the retry decision and the policy resolver only ask.
 *
 *   opening the policy:  PolicyError retryable (remote policy down) → retried without a code
 *                        anything else                              → POLICY_INVALID, rejected (no retry)
 *                        a scripted/module name the worker lacks     → POLICY_UNKNOWN, rejected
 *   binding the task:    EpisodeError not retryable                  → TASK_NOT_RUNNABLE, rejected
 *                        session unusable/closed, or the run threw   → DEVICE_UNUSABLE, retried elsewhere
 *   the episode's end:   cancelled                                   → CANCELLED
 *                        device trouble (reset/action/observation failed, hung, lost) → DEVICE_TROUBLE
 *                        policy_failed                               → POLICY_FAILED
 */
import { DEVICE_TROUBLE, EpisodeError, type EndCause } from "@farm/episode";
import { isPolicyError } from "@farm/policy";
import type { QueueErrorCode } from "@farm/queue";

export type RetryCode = Extract<QueueErrorCode, "DEVICE_TROUBLE" | "POLICY_FAILED" | "CANCELLED" | "OPERATOR_ABANDONED">;

/** A job whose device cannot run it (now): retried on another device. */
export const DEVICE_UNUSABLE_CODE = "DEVICE_UNUSABLE" satisfies QueueErrorCode;
/** A `scripted:`/`module:` policy name this worker's policy folder does not have. */
export const POLICY_UNKNOWN_CODE = "POLICY_UNKNOWN" satisfies QueueErrorCode;

/** An episode's end cause → the code a retry of it carries; undefined: the episode is data (committed). */
export function retryCodeOfCause(cause: EndCause): RetryCode | undefined {
  if (cause === "cancelled") return "CANCELLED";
  if (DEVICE_TROUBLE.has(cause)) return "DEVICE_TROUBLE";
  if (cause === "policy_failed") return "POLICY_FAILED";
  return undefined;
}

/** Binding a task to the device failed: TASK_NOT_RUNNABLE (rejected) or undefined (the error is retried as it is). */
export function sessionFailureCode(e: unknown): Extract<QueueErrorCode, "TASK_NOT_RUNNABLE"> | undefined {
  return EpisodeError.is(e) && !e.retryable ? "TASK_NOT_RUNNABLE" : undefined;
}

/** Turning a job's policy spec into a policy failed: POLICY_INVALID (rejected) or undefined (retried: the remote may come back). */
export function policyFailureCode(e: unknown): Extract<QueueErrorCode, "POLICY_INVALID"> | undefined {
  return isPolicyError(e) && e.retryable ? undefined : "POLICY_INVALID";
}
