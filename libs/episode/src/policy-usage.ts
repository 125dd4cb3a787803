/** A policy's reported cost of one answer, as the step's extras (names `policy_*`, scalars) so learners and data sets see it. */
import type { PolicyUsage } from "@farm/policy";
import type { StepExtra } from "./trajectory-types.ts";

export const POLICY_USAGE_EXTRAS = {
  promptTokens: { name: "policy_prompt_tokens", dtype: "INT64" },
  completionTokens: { name: "policy_completion_tokens", dtype: "INT64" },
  latencyMs: { name: "policy_latency_ms", dtype: "DOUBLE" },
  attempts: { name: "policy_attempts", dtype: "INT32" },
} as const;

export function usageExtras(u: PolicyUsage): StepExtra[] {
  const out: StepExtra[] = [];
  for (const k of Object.keys(POLICY_USAGE_EXTRAS) as (keyof PolicyUsage)[]) {
    const v = u[k];
    if (v === undefined) continue;
    const spec = POLICY_USAGE_EXTRAS[k];
    out.push({ name: spec.name, dtype: spec.dtype, shape: [], value: spec.dtype === "DOUBLE" ? v : Math.round(v) });
  }
  return out;
}
