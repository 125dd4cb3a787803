/**
 * How this worker host talks to remote policies: one host-level batcher for `http-batch:` policies (the
 * steps of all its devices that name one URL share batches) and the metrics of every remote exchange.
 */
import { PolicyBatcher } from "@farm/policy";
import type { FarmMetrics } from "@farm/metrics";
import type { WorkerConfig } from "./config.ts";

export interface PolicyTransport {
  batcher: PolicyBatcher;
  /** For single (`http:`) policies: one call per exchange. */
  onExchange(ok: boolean): void;
  /** Pixel options of remote policies (FARM_POLICY_PIXELS). */
  pixels: { needsPixels: boolean; pixelEncoding?: "png" | "rgb" };
}

export function hostPolicyTransport(config: Pick<WorkerConfig, "policyBatchWindowMs" | "policyMaxBatch" | "policyPixels">, metrics: FarmMetrics): PolicyTransport {
  return {
    pixels: config.policyPixels === "none" ? { needsPixels: false } : { needsPixels: true, pixelEncoding: config.policyPixels },
    batcher: new PolicyBatcher({
      windowMs: config.policyBatchWindowMs,
      maxBatch: config.policyMaxBatch,
      onBatch: ({ size, ok }) => metrics.policyRequest("batched", ok, size),
    }),
    onExchange: (ok) => metrics.policyRequest("single", ok, 1),
  };
}
