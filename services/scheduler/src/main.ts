/**
 * The scheduler's one composition root: config → logger, metrics, Scheduler, HTTP. Shutdown runs in
 * reverse: stop the HTTP server (no new requests), then the scheduler (timers, QueueEvents, Queue,
 * Redis).
 */
import { createLogger, type Logger } from "@farm/log";
import { runUntilSignal, untilAborted } from "@farm/lifecycle";
import { createFarmMetrics, type FarmMetrics } from "@farm/metrics";
import { redactRedisUrl } from "@farm/queue";
import type { SchedulerConfig } from "./config.ts";
import { startSchedulerHttp, type SchedulerHttp } from "./http.ts";
import { Scheduler } from "./scheduler.ts";

export interface RunningScheduler {
  scheduler: Scheduler;
  http: SchedulerHttp;
  metrics: FarmMetrics;
  log: Logger;
  /** Idempotent. */
  close(): Promise<void>;
}

export async function runScheduler(config: SchedulerConfig, opts: { log?: Logger } = {}): Promise<RunningScheduler> {
  const log = opts.log ?? createLogger({ service: "scheduler", level: config.logLevel });
  const metrics = createFarmMetrics({
    service: "scheduler",
    onCollectError: ({ source, error }) => log.warn({ event: "metrics:collect-failed", source, error: error.message }, "metrics collection failed"),
  });
  const scheduler = await Scheduler.create({
    redisUrl: config.redisUrl,
    prefix: config.prefix,
    taskPaths: config.taskPaths,
    windowSize: config.windowSize,
    tickMs: config.tickMs,
    reconcileMs: config.reconcileMs,
    ...(config.llmKeyHosts ? { llmKeyHosts: config.llmKeyHosts } : {}),
    log,
    metrics,
  });
  let http: SchedulerHttp;
  try {
    await scheduler.start();
    http = await startSchedulerHttp({ scheduler, metrics, port: config.port, host: config.host, token: config.token, allowedHosts: config.allowedHosts, protectMetrics: config.protectMetrics, log, trajectories: config.trajectories, seriesSampleMs: config.seriesSampleMs, operators: config.operators, farmMetrics: metrics });
  } catch (e) {
    await scheduler.close();
    throw e;
  }
  log.info({ event: "scheduler:ready", api: http.url, redis: redactRedisUrl(config.redisUrl), prefix: config.prefix, tasks: config.taskPaths }, "scheduler ready");
  let closing: Promise<void> | undefined;
  return {
    scheduler,
    http,
    metrics,
    log,
    close() {
      closing ??= (async () => {
        await http.close();
        await scheduler.close();
      })();
      return closing;
    },
  };
}

/** Runs until SIGTERM or SIGINT, then drains and resolves. */
export async function runSchedulerUntilSignal(config: SchedulerConfig, onReady?: (r: RunningScheduler) => void): Promise<void> {
  const running = await runScheduler(config);
  onReady?.(running);
  await runUntilSignal(
    async (stop) => {
      await untilAborted(stop);
      await running.close();
    },
    { onSignal: (signal) => running.log.info({ event: "scheduler:stopping", signal }, "draining") },
  );
}
