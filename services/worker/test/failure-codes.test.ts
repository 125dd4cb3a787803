/** The one mapping from episode/policy outcomes to the queue codes jobs fail with. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DeviceUnusableError, EpisodeError, TaskNotRunnableError, type EndCause } from "@farm/episode";
import { PolicyError } from "@farm/policy";
import { policyFailureCode, retryCodeOfCause, sessionFailureCode } from "../src/failure-codes.ts";

test("every end cause maps to its retry code, or to none when the episode is data", () => {
  const expected: Record<EndCause, string | undefined> = {
    episode_end: undefined,
    step_limit: undefined,
    time_limit: undefined,
    app_left: undefined,
    reset_failed: "DEVICE_TROUBLE",
    action_failed: "DEVICE_TROUBLE",
    observation_failed: "DEVICE_TROUBLE",
    device_hung: "DEVICE_TROUBLE",
    device_lost: "DEVICE_TROUBLE",
    policy_failed: "POLICY_FAILED",
    cancelled: "CANCELLED",
    agent_status: undefined,
    invalid_actions: undefined,
    goal_reached: undefined,
    observation_budget: undefined,
    stale_policy: undefined,
    operator_abandoned: undefined,
  };
  for (const [cause, code] of Object.entries(expected)) assert.equal(retryCodeOfCause(cause as EndCause), code, cause);
});

test("binding: a task that cannot run is rejected as TASK_NOT_RUNNABLE; device trouble and plain errors are retried as they are", () => {
  assert.equal(sessionFailureCode(new TaskNotRunnableError("no APK")), "TASK_NOT_RUNNABLE");
  assert.equal(sessionFailureCode(new EpisodeError("invalid_result", "x", false)), "TASK_NOT_RUNNABLE");
  assert.equal(sessionFailureCode(new DeviceUnusableError("emulator-5554", "gone")), undefined);
  assert.equal(sessionFailureCode(new Error("socket closed")), undefined);
});

test("policy: a retryable policy error (remote down) is retried; anything else is POLICY_INVALID", () => {
  assert.equal(policyFailureCode(new PolicyError("unreachable", "down", { retryable: true })), undefined);
  assert.equal(policyFailureCode(new PolicyError("bad_spec", "nope")), "POLICY_INVALID");
  assert.equal(policyFailureCode(new Error("boom")), "POLICY_INVALID");
  assert.equal(policyFailureCode("thrown string"), "POLICY_INVALID");
});
