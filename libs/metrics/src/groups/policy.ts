/** Policies: errors by code, HTTP requests (single or batched) and batch sizes, foreign bodies, model tokens and latency. */
import type { PolicyErrorCode } from "@farm/policy";
import { Counter, Histogram } from "prom-client";
import { POLICY_LATENCY_BUCKETS_SEC } from "../buckets.ts";
import { closedLabel } from "../bounded-label.ts";
import type { MetricContext } from "../metric-context.ts";
import { METRIC } from "../names.ts";
import { POLICY_ERROR_CODES } from "../vocabulary.ts";

export const POLICY_MODES = ["single", "batched"] as const;
export type PolicyMode = (typeof POLICY_MODES)[number];
/** Why a remote policy's answer body was kept out of job data (@farm/policy's ForeignBody kind). */
export const FOREIGN_BODY_KINDS = ["http_status", "not_json", "not_an_answer"] as const;
export type ForeignBodyKind = (typeof FOREIGN_BODY_KINDS)[number];

export function createPolicyMetrics({ registers, report, valid }: MetricContext) {
  const policyErrors = new Counter({
    name: METRIC.policyErrors,
    help: "Policy failures by PolicyError code",
    labelNames: ["code"] as const,
    registers,
  });
  const policyCode = closedLabel(METRIC.policyErrors, "code", POLICY_ERROR_CODES, report);
  // Zero series for the closed error set, so rate() and alerts see them before the first error.
  for (const code of POLICY_ERROR_CODES) policyErrors.inc({ code }, 0);
  const policyRequests = new Counter({
    name: METRIC.policyRequests,
    help: "HTTP requests to remote policies: mode single (one device's step) or batched (one per batch), result ok or error",
    labelNames: ["mode", "result"] as const,
    registers,
  });
  const policyBatchSize = new Histogram({
    name: METRIC.policyBatchSize,
    help: "Messages (device steps and episode ends) per batched remote-policy request",
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers,
  });
  for (const mode of POLICY_MODES) for (const result of ["ok", "error"]) policyRequests.inc({ mode, result }, 0);
  const policyForeignBodies = new Counter({
    name: METRIC.policyForeignBodies,
    help: "Remote-policy answer bodies kept out of job data (not the protocol's JSON error), by kind",
    labelNames: ["kind"] as const,
    registers,
  });
  for (const kind of FOREIGN_BODY_KINDS) policyForeignBodies.inc({ kind }, 0);
  const policyTokens = new Counter({
    name: METRIC.policyTokens,
    help: "Model tokens the policies' answers cost, as the model server reported them: kind prompt or completion",
    labelNames: ["kind"] as const,
    registers,
  });
  for (const kind of ["prompt", "completion"]) policyTokens.inc({ kind }, 0);
  const policyLatency = new Histogram({
    name: METRIC.policyLatency,
    help: "Time one policy answer took as the policy measured it (a model's, its retries included), for policies that report it",
    buckets: POLICY_LATENCY_BUCKETS_SEC,
    registers,
  });

  return {
    /** One HTTP exchange with a remote policy; `size` messages for a batched one. */
    policyRequest(mode: PolicyMode, ok: boolean, size: number): void {
      policyRequests.inc({ mode: POLICY_MODES.includes(mode) ? mode : "single", result: ok ? "ok" : "error" });
      if (mode === "batched" && valid(METRIC.policyBatchSize, size)) policyBatchSize.observe(size);
    },
    /** A remote policy's answer body kept out of job data. */
    policyForeignBody(kind: ForeignBodyKind): void {
      if (FOREIGN_BODY_KINDS.includes(kind)) policyForeignBodies.inc({ kind });
    },
    /** What one answer cost, from the step event's `policyUsage` (fields the policy did not report are skipped). */
    policyUsage(u: { promptTokens?: number; completionTokens?: number; latencyMs?: number }): void {
      if (u.promptTokens !== undefined && valid(METRIC.policyTokens, u.promptTokens)) policyTokens.inc({ kind: "prompt" }, u.promptTokens);
      if (u.completionTokens !== undefined && valid(METRIC.policyTokens, u.completionTokens)) policyTokens.inc({ kind: "completion" }, u.completionTokens);
      if (u.latencyMs !== undefined && valid(METRIC.policyLatency, u.latencyMs)) policyLatency.observe(u.latencyMs / 1000);
    },
    policyError(code: PolicyErrorCode): void {
      policyErrors.inc({ code: policyCode(code) });
    },
  };
}
