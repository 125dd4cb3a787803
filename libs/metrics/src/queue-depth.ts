/**
 * Queue depth as one gauge, farm_queue_jobs{queue,state}, filled at scrape time from a callback
 * (e.g. BullMQ Queue.getJobCounts per queue). Not bullmq's exportPrometheusMetrics: that builds its
 * own metric text per queue, outside our registry, names and label rules.
 * A failing or slow source never fails the scrape: the gauge is left empty for that scrape and
 * farm_metrics_collect_errors_total{source="queue_depth"} counts it (and `onError` hears of it, to log).
 */
import type { Counter, Gauge } from "prom-client";
import { withDeadline } from "@farm/time";

export interface QueueDepthSample {
  queue: string;
  state: string;
  count: number;
}

export type QueueDepthSource = () => Promise<QueueDepthSample[]>;

export function collectQueueDepth(opts: {
  gauge: Gauge<"queue" | "state">;
  source: () => QueueDepthSource | undefined;
  timeoutMs: number;
  collectErrors: Counter<"source">;
  queueLabel: (value: string) => string;
  stateLabel: (value: string) => string;
  onError?: (error: Error) => void;
}): () => Promise<void> {
  return async () => {
    const source = opts.source();
    opts.gauge.reset();
    if (!source) return;
    try {
      const samples = await withDeadline(source(), opts.timeoutMs, () => new Error(`queue depth source took longer than ${opts.timeoutMs} ms`));
      for (const s of samples) {
        if (!Number.isFinite(s.count) || s.count < 0) continue;
        // inc, not set: two samples that both map to "other" must add up.
        opts.gauge.inc({ queue: opts.queueLabel(s.queue), state: opts.stateLabel(s.state) }, s.count);
      }
    } catch (e) {
      opts.gauge.reset();
      opts.collectErrors.inc({ source: "queue_depth" });
      opts.onError?.(e instanceof Error ? e : new Error(String(e)));
    }
  };
}
