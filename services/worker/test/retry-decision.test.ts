/** The worker's retry decision, a pure function: every rule and the recovery timing that goes with it. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { decideAttempt, type AttemptFacts } from "../src/index.ts";

const base: AttemptFacts = { cause: "episode_end", attemptsMade: 0, attempts: 5, drained: false, lockLost: false, needsRecovery: false };
const d = (f: Partial<AttemptFacts>) => decideAttempt({ ...base, ...f });

test("a finished episode is committed on any attempt", () => {
  for (const cause of ["episode_end", "step_limit", "time_limit", "app_left"] as const) {
    assert.deepEqual(d({ cause }), { kind: "commit", recovery: "none" });
    assert.deepEqual(d({ cause, attemptsMade: 4 }), { kind: "commit", recovery: "none" });
  }
});

test("device trouble is retried while attempts are left, recovering in the background; the last attempt commits after recovering", () => {
  for (const cause of ["reset_failed", "action_failed", "observation_failed", "device_hung", "device_lost"] as const) {
    assert.deepEqual(d({ cause, needsRecovery: true }), { kind: "retry", code: "DEVICE_TROUBLE", recovery: "background" });
    assert.deepEqual(d({ cause, attemptsMade: 3, needsRecovery: true }), { kind: "retry", code: "DEVICE_TROUBLE", recovery: "background" });
    assert.deepEqual(d({ cause, attemptsMade: 4, needsRecovery: true }), { kind: "commit", recovery: "inline" });
  }
  assert.deepEqual(d({ cause: "device_lost", attempts: 1 }), { kind: "commit", recovery: "none" }, "a job with one attempt keeps its only record");
});

test("a policy failure is retried, then kept as data", () => {
  assert.deepEqual(d({ cause: "policy_failed" }), { kind: "retry", code: "POLICY_FAILED", recovery: "none" });
  assert.deepEqual(d({ cause: "policy_failed", attemptsMade: 4 }), { kind: "commit", recovery: "none" });
});

test("a cancelled episode is handed back by a drain, else retried as CANCELLED; never committed", () => {
  assert.deepEqual(d({ cause: "cancelled", drained: true }), { kind: "hand-back", recovery: "none" });
  assert.deepEqual(d({ cause: "cancelled", drained: true, attemptsMade: 4, needsRecovery: true }), { kind: "hand-back", recovery: "background" });
  assert.deepEqual(d({ cause: "cancelled" }), { kind: "retry", code: "CANCELLED", recovery: "none" });
  assert.deepEqual(d({ cause: "cancelled", attemptsMade: 4 }), { kind: "retry", code: "CANCELLED", recovery: "none" });
});

test("a lost lock abandons the attempt whatever the episode did (the job's new owner decides)", () => {
  for (const cause of ["episode_end", "cancelled", "device_hung", "policy_failed"] as const) {
    assert.equal(d({ cause, lockLost: true }).kind, "abandon");
    assert.equal(d({ cause, lockLost: true, attemptsMade: 4, drained: true }).kind, "abandon");
  }
  assert.deepEqual(d({ cause: "device_hung", lockLost: true, needsRecovery: true }), { kind: "abandon", recovery: "background" });
});

test("an operator_abandoned episode is retried for another operator and never committed, unless the campaign records abandons", () => {
  assert.deepEqual(d({ cause: "operator_abandoned" }), { kind: "retry", code: "OPERATOR_ABANDONED", recovery: "none" });
  assert.deepEqual(d({ cause: "operator_abandoned", attemptsMade: 4 }), { kind: "retry", code: "OPERATOR_ABANDONED", recovery: "none" });
  assert.deepEqual(d({ cause: "operator_abandoned", onAbandon: "retry" }), { kind: "retry", code: "OPERATOR_ABANDONED", recovery: "none" });
  assert.deepEqual(d({ cause: "operator_abandoned", onAbandon: "record" }), { kind: "commit", recovery: "none" });
});
