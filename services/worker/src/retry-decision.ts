/**
 * What to do with an episode that ended (or was cut short), as one pure function of the facts, so every
 * rule is in one place and unit-tested (test/retry-decision.test.ts):
 *
 *   lock lost            → abandon: not committed, not answered; the attempt that now owns the job decides
 *   cancelled by a drain → hand back (no attempt used)
 *   cancelled otherwise  → retry CANCELLED
 *   device trouble / policy failure with attempts left → retry DEVICE_TROUBLE / POLICY_FAILED
 *   operator abandoned (human policy) → retry OPERATOR_ABANDONED (never committed; past the attempts the job
 *                          fails), unless the campaign says onAbandon: record (then committed as data)
 *   anything else        → commit (the last attempt keeps a device-trouble truncation: it is data)
 *
 * A session that needs recovery recovers in the background (the job goes back at once, to another
 * device) unless the episode is committed, which waits for recovery first (the session must be sound
 * before this device takes the next job).
 */
import type { EndCause } from "@farm/episode";
import { retryCodeOfCause, type RetryCode } from "./failure-codes.ts";

export interface AttemptFacts {
  /** Why the episode ended (EpisodeTrajectory.cause). */
  cause: EndCause;
  /** job.attemptsMade before this attempt. */
  attemptsMade: number;
  /** job.opts.attempts (1 when unset). */
  attempts: number;
  /** The worker drains (its drain signal aborted the episode). */
  drained: boolean;
  /** This worker no longer holds the job's lock (BullMQ could not renew it). */
  lockLost: boolean;
  /** The session was left `needs_recovery`. */
  needsRecovery: boolean;
  /** What an operator_abandoned episode becomes (the campaign's operator.onAbandon; default retry). */
  onAbandon?: "retry" | "record";
}

export type Recovery = "none" | "inline" | "background";

export type AttemptDecision =
  | { kind: "commit"; recovery: Recovery }
  | { kind: "retry"; code: RetryCode; recovery: Recovery }
  | { kind: "hand-back"; recovery: Recovery }
  | { kind: "abandon"; recovery: Recovery };

export function attemptsLeft(f: Pick<AttemptFacts, "attemptsMade" | "attempts">): boolean {
  return f.attemptsMade + 1 < Math.max(1, f.attempts);
}

export function decideAttempt(f: AttemptFacts): AttemptDecision {
  const recovery = (commit: boolean): Recovery => (!f.needsRecovery ? "none" : commit ? "inline" : "background");
  if (f.lockLost) return { kind: "abandon", recovery: recovery(false) };
  if (f.cause === "cancelled") return f.drained ? { kind: "hand-back", recovery: recovery(false) } : { kind: "retry", code: "CANCELLED", recovery: recovery(false) };
  if (f.cause === "operator_abandoned" && f.onAbandon !== "record") return { kind: "retry", code: "OPERATOR_ABANDONED", recovery: recovery(false) };
  const code = retryCodeOfCause(f.cause);
  if (code && attemptsLeft(f)) return { kind: "retry", code, recovery: recovery(false) };
  return { kind: "commit", recovery: recovery(true) };
}
