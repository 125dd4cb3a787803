/** The worker counts each step's policyUsage (the llm policy's tokens and latency) into the farm metrics. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createFarmMetrics } from "@farm/metrics";
import { episodeEventsToMetrics } from "../src/metrics-wiring.ts";

const phasesMs = { policy: 50, action: 2, observation: 3, log: 0 };

test("step events with policyUsage feed farm_policy_tokens_total and farm_policy_latency_seconds", async () => {
  const m = createFarmMetrics({ service: "worker", collectDefault: false });
  const hook = episodeEventsToMetrics(m);
  const step = { type: "step", serial: "emulator-5554", taskId: "todo_create_note", episodeIndex: 0, reward: 0, phasesMs } as const;
  hook({ ...step, step: 1, policyUsage: { promptTokens: 900, completionTokens: 20, latencyMs: 52, attempts: 1 } });
  hook({ ...step, step: 2, policyUsage: { promptTokens: 950, completionTokens: 25, latencyMs: 61, attempts: 2 } });
  hook({ ...step, step: 3 });
  const text = await m.metricsText();
  assert.match(text, /^farm_policy_tokens_total\{kind="prompt",service="worker"\} 1850$/m);
  assert.match(text, /^farm_policy_tokens_total\{kind="completion",service="worker"\} 45$/m);
  assert.match(text, /^farm_policy_latency_seconds_count\{service="worker"\} 2$/m);
});
