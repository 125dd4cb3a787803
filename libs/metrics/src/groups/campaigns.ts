/** Scheduling and queues: campaigns, jobs enqueued, job start latency, fetch bursts, queue depth read at scrape time. */
import { Counter, Gauge, Histogram } from "prom-client";
import { JOB_START_LATENCY_BUCKETS_SEC } from "../buckets.ts";
import { closedLabel } from "../bounded-label.ts";
import type { MetricContext } from "../metric-context.ts";
import { METRIC } from "../names.ts";
import { collectQueueDepth, type QueueDepthSource } from "../queue-depth.ts";
import { GROUP_RESULTS, QUEUE_STATES } from "../vocabulary.ts";

export function createCampaignMetrics(ctx: MetricContext) {
  const { registers, valid, labels: { task } } = ctx;
  const campaigns = new Counter({ name: METRIC.campaignsSubmitted, help: "Campaigns accepted by the scheduler", registers });
  const jobsEnqueued = new Counter({
    name: METRIC.jobsEnqueued,
    help: "Episode jobs put on the queue, by task",
    labelNames: ["task"] as const,
    registers,
  });
  const jobStartLatency = new Histogram({
    name: METRIC.jobStartLatency,
    help: "Time from enqueue to a worker starting the job",
    buckets: JOB_START_LATENCY_BUCKETS_SEC,
    registers,
  });
  const jobFetchBurst = new Histogram({
    name: METRIC.jobFetchBurst,
    help: "Episode jobs a worker host took at once beyond the one it fetched (its free devices' share of a burst)",
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers,
  });
  const groups = new Counter({
    name: METRIC.groups,
    help: "Finished groups of grouped campaigns (GRPO): complete (rewards differ), uniform (all equal, not re-sampled), resampled (all equal, a new instance added), failed (a member failed for good)",
    labelNames: ["result"] as const,
    registers,
  });
  const groupResult = closedLabel(METRIC.groups, "result", GROUP_RESULTS, ctx.report);
  for (const r of GROUP_RESULTS) groups.inc({ result: r }, 0);
  const streamPublished = new Counter({ name: METRIC.streamPublished, help: "Committed episodes added to their campaign's stream (in the commit's own Redis step)", registers });
  const streamLag = new Gauge({
    name: METRIC.streamConsumerLag,
    help: "Over the consumer groups of running campaigns' streams, the largest number of entries not yet delivered (lag) and not yet acknowledged (pending)",
    labelNames: ["measure"] as const,
    registers,
  });
  streamLag.set({ measure: "lag" }, 0);
  streamLag.set({ measure: "pending" }, 0);
  const queueDepth = queueDepthGauge(ctx);
  return {
    campaignSubmitted(): void {
      campaigns.inc();
    },
    jobsEnqueued(taskId: string, n = 1): void {
      if (valid(METRIC.jobsEnqueued, n)) jobsEnqueued.inc({ task: task(METRIC.jobsEnqueued, taskId) }, n);
    },
    /** A group of a grouped campaign finished (scheduler). */
    groupFinished(result: string): void {
      groups.inc({ result: groupResult(result) });
    },
    /** A committed episode went onto its campaign's stream (worker). */
    streamPublished(n = 1): void {
      if (valid(METRIC.streamPublished, n)) streamPublished.inc(n);
    },
    /** The worst consumer group of the running campaigns' streams: entries not delivered yet, not acknowledged yet (scheduler). */
    setStreamConsumerLag(lag: number, pending: number): void {
      if (valid(METRIC.streamConsumerLag, lag)) streamLag.set({ measure: "lag" }, lag);
      if (valid(METRIC.streamConsumerLag, pending)) streamLag.set({ measure: "pending" }, pending);
    },
    /** A worker started a job `latencySec` after it was enqueued. */
    jobStarted(latencySec: number): void {
      if (valid(METRIC.jobStartLatency, latencySec)) jobStartLatency.observe(latencySec);
    },
    /** A worker host's fetch found jobs waiting and took `jobs` more at once. */
    jobFetchBurst(jobs: number): void {
      if (valid(METRIC.jobFetchBurst, jobs)) jobFetchBurst.observe(jobs);
    },
    ...queueDepth,
  };
}

/** farm_queue_jobs{queue,state}, read from its source at every scrape (bounded by a timeout; failures counted). */
function queueDepthGauge({ registers, report, opts, collectErrors, setScrapeCollection, labels: { queueName } }: MetricContext) {
  let queueDepthSource: QueueDepthSource | undefined;
  const queueStateLabel = closedLabel(METRIC.queueJobs, "state", QUEUE_STATES, report);
  const queueJobs: Gauge<"queue" | "state"> = new Gauge({
    name: METRIC.queueJobs,
    help: "Jobs per queue and state, read at scrape time",
    labelNames: ["queue", "state"] as const,
    registers,
    collect: () => {
      const collection = collectQueueDepth({
        gauge: queueJobs,
        source: () => queueDepthSource,
        timeoutMs: opts.queueDepthTimeoutMs ?? 2000,
        collectErrors,
        queueLabel: (v) => queueName(METRIC.queueJobs, v),
        stateLabel: queueStateLabel,
        onError: (error) => opts.onCollectError?.({ source: "queue_depth", error }),
      })();
      setScrapeCollection(collection);
      return collection;
    },
  });
  return {
    /**
     * Where farm_queue_jobs comes from, called at every scrape: e.g. for each BullMQ queue,
     * `Object.entries(await q.getJobCounts())` → `{ queue: q.name, state, count }`.
     */
    setQueueDepthSource(source: QueueDepthSource | undefined): void {
      queueDepthSource = source;
    },
  };
}
