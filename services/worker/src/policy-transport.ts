/**
 * How this worker host talks to remote policies: one host-level batcher for `http-batch:` policies (the
 * steps of all its devices that name one URL share batches) and the metrics of every remote exchange.
 */
import type { Logger } from "@farm/log";
import { PolicyBatcher, type ForeignBody, type ForeignBodyListener } from "@farm/policy";
import type { FarmMetrics } from "@farm/metrics";
import type { WorkerConfig } from "./config.ts";
import type { OperatorRelay } from "./operator-relay.ts";

export interface PolicyTransport {
  batcher: PolicyBatcher;
  /** For single (`http:`) policies: one call per exchange. */
  onExchange(ok: boolean): void;
  /** Remote answers kept out of job data: counted, and logged here (bounded). */
  onForeignBody: ForeignBodyListener;
  /** Pixel options of remote policies (FARM_POLICY_PIXELS). */
  pixels: { needsPixels: boolean; pixelEncoding?: "png" | "rgb" };
  /** For `llm:` policies: one line per failed or invalid answer streak. */
  logger?: Logger;
  /** For `llm:` policies: this worker's FARM_LLM_API_KEY (jobs never carry one). */
  llmApiKey?: string;
  /** For `llm:` policies: the only hosts the key goes to (FARM_LLM_KEY_HOSTS; default loopback). */
  llmKeyHosts?: readonly string[];
  /** For `human` policies: the host's relay to the operators' browsers (through Redis and the scheduler). */
  operators?: OperatorRelay;
}

export function hostPolicyTransport(config: Pick<WorkerConfig, "policyBatchWindowMs" | "policyMaxBatch" | "policyPixels"> & Partial<Pick<WorkerConfig, "llmApiKey" | "llmKeyHosts">>, metrics: FarmMetrics, logger?: Logger): PolicyTransport {
  const log = foreignBodyLog(logger);
  return {
    onForeignBody: (b) => {
      metrics.policyForeignBody(b.kind);
      log(b);
    },
    pixels: config.policyPixels === "none" ? { needsPixels: false } : { needsPixels: true, pixelEncoding: config.policyPixels },
    batcher: new PolicyBatcher({
      windowMs: config.policyBatchWindowMs,
      maxBatch: config.policyMaxBatch,
      onBatch: ({ size, ok }) => metrics.policyRequest("batched", ok, size),
    }),
    onExchange: (ok) => metrics.policyRequest("single", ok, 1),
    ...(logger ? { logger: logger.child({ component: "policy" }) } : {}),
    ...(config.llmApiKey ? { llmApiKey: config.llmApiKey } : {}),
    ...(config.llmKeyHosts ? { llmKeyHosts: config.llmKeyHosts } : {}),
  };
}

/** One log line per URL per minute at most (a failing policy answers every step), with how many were not logged. */
const LOG_EVERY_MS = 60_000;
const MAX_URLS = 256;

function foreignBodyLog(logger: Logger | undefined): (b: ForeignBody) => void {
  const last = new Map<string, { atMs: number; skipped: number }>();
  return (b) => {
    if (!logger) return;
    const now = Date.now();
    const seen = last.get(b.url);
    if (seen && now - seen.atMs < LOG_EVERY_MS) {
      seen.skipped++;
      return;
    }
    if (!seen && last.size >= MAX_URLS) last.delete(last.keys().next().value!);
    last.set(b.url, { atMs: now, skipped: 0 });
    logger.warn({ event: "policy:foreign-body", ...b, notLoggedSince: seen?.skipped ?? 0 }, "a remote policy's answer body was kept out of job data (only the policy protocol's JSON error is shown there)");
  };
}
