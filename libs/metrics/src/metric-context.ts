/**
 * What every metric group shares: the registry list to register in, the label-overflow reporter, the
 * number check, the open-label guards (one cap per label across groups) and the metrics' own health.
 */
import { Counter, Registry } from "prom-client";
import { cappedLabel, type OverflowReporter } from "./bounded-label.ts";
import { METRIC } from "./names.ts";

export interface FarmMetricsOptions {
  /** Set as the `service` label on every series (e.g. "worker", "scheduler"). */
  service: string;
  /** The `version` label of farm_build_info. Default: the version in the repository's package.json. */
  version?: string;
  /** More constant labels on every series (e.g. `{ host: "farm-3" }`); keep them constant per process. */
  defaultLabels?: Record<string, string>;
  /** Node.js process metrics (process_*, nodejs_*). Default true. */
  collectDefault?: boolean;
  /** Distinct task ids kept as label values before "other". Default 200. */
  maxTasks?: number;
  /** Reward histogram buckets (rewards are task-specific). Default REWARD_BUCKETS. */
  rewardBuckets?: number[];
  /** How long a scrape waits for the queue-depth source. Default 2000 ms. */
  queueDepthTimeoutMs?: number;
  /**
   * Told about the first out-of-bounds value of each (metric, label) pair, so the caller can log it
   * once; later ones are only counted in farm_metric_label_overflow_total.
   */
  onLabelOverflow?: (info: { metric: string; label: string; value: string }) => void;
  /** Told about every failed scrape-time collection (e.g. Redis down while reading queue depth), to log it. */
  onCollectError?: (info: { source: string; error: Error }) => void;
}

type CappedGuard = ReturnType<typeof cappedLabel>;

export interface MetricContext {
  opts: FarmMetricsOptions;
  registers: Registry[];
  report: OverflowReporter;
  /** False (and counted in farm_invalid_values_total) for a non-finite number, or a negative one unless allowed. */
  valid(metric: string, n: number, allowNegative?: boolean): boolean;
  /** Open labels, each one guard shared by every metric using it, so the cap is one set of values. */
  labels: { task: CappedGuard; adbOp: CappedGuard; deviceState: CappedGuard; recoveryCause: CappedGuard; queueName: CappedGuard };
  collectErrors: Counter<"source">;
  /** The health counters wait for this scrape's async collection (set by the queue-depth gauge). */
  setScrapeCollection(p: Promise<void>): void;
  /** Registers the health counters; called after every group, so they are collected last. */
  registerHealth(): void;
}

// Ids we accept as label values: short, no spaces, no slashes (a path or a message is not an id).
const ID_PATTERN = /^[A-Za-z0-9_.:-]{1,100}$/;
const SNAKE_PATTERN = /^[a-z][a-z0-9_]{0,39}$/;

export function createMetricContext(opts: FarmMetricsOptions, registry: Registry): MetricContext {
  // Registered last, and they wait for this scrape's async collections, so a failure or overflow found
  // while collecting shows up in the same scrape rather than the next one.
  let scrapeCollection: Promise<void> = Promise.resolve();
  const afterScrapeCollection = () => scrapeCollection;
  const labelOverflow = new Counter({
    name: METRIC.labelOverflow,
    help: "Label values outside their bounded set, recorded as \"other\" instead",
    labelNames: ["metric", "label"] as const,
    registers: [],
    collect: afterScrapeCollection,
  });
  const invalidValues = new Counter({
    name: METRIC.invalidValues,
    help: "Observations dropped because the number was not finite or was negative where it cannot be",
    labelNames: ["metric"] as const,
    registers: [],
  });
  const collectErrors = new Counter({
    name: METRIC.collectErrors,
    help: "Scrape-time collections that failed or timed out (the gauge is empty for that scrape)",
    labelNames: ["source"] as const,
    registers: [],
    collect: afterScrapeCollection,
  });
  const reportedOverflows = new Set<string>();
  const report: OverflowReporter = (metric, label, value) => {
    labelOverflow.inc({ metric, label });
    const key = `${metric}\u0000${label}`;
    if (!reportedOverflows.has(key)) {
      reportedOverflows.add(key);
      opts.onLabelOverflow?.({ metric, label, value });
    }
  };
  return {
    opts,
    registers: [registry],
    report,
    valid(metric, n, allowNegative = false) {
      if (Number.isFinite(n) && (allowNegative || n >= 0)) return true;
      invalidValues.inc({ metric });
      return false;
    },
    labels: {
      task: cappedLabel("task", { maxValues: opts.maxTasks ?? 200, pattern: ID_PATTERN }, report),
      adbOp: cappedLabel("op", { maxValues: 40, pattern: SNAKE_PATTERN }, report),
      deviceState: cappedLabel("state", { maxValues: 16, pattern: SNAKE_PATTERN }, report),
      recoveryCause: cappedLabel("cause", { maxValues: 32, pattern: SNAKE_PATTERN }, report),
      queueName: cappedLabel("queue", { maxValues: 16, pattern: ID_PATTERN }, report),
    },
    collectErrors,
    setScrapeCollection(p) {
      scrapeCollection = p;
    },
    registerHealth() {
      registry.registerMetric(labelOverflow);
      registry.registerMetric(invalidValues);
      registry.registerMetric(collectErrors);
    },
  };
}
