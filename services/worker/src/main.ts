/**
 * The worker process's composition root: config from flags and environment, the service, signals.
 * SIGTERM / SIGINT drain (running episodes finish within drainTimeoutMs or are handed back), then the
 * process exits 0. A second signal exits at once (BullMQ's stall detection hands running jobs back).
 */
import { createLogger } from "@farm/log";
import { runUntilSignal, untilAborted } from "@farm/lifecycle";
import { resolveWorkerConfig, type WorkerConfigInput } from "./config.ts";
import { WorkerService } from "./worker-service.ts";

export async function runWorkerMain(input: WorkerConfigInput = {}): Promise<void> {
  const config = resolveWorkerConfig(input);
  const logger = createLogger({ service: "worker", level: config.logLevel });
  const service = await WorkerService.create(config, { logger });
  await runUntilSignal(
    async (stop) => {
      await service.start();
      // Machine-readable start line on stdout (tests and scripts wait for it); logs go to stderr.
      process.stdout.write(`${JSON.stringify({ event: "worker:ready", metrics: service.metricsUrl ?? null, out: config.outDir, env: service.envAddress ?? null, openenv: service.openEnvUrl ?? null })}\n`);
      await untilAborted(stop);
      await service.close().catch((e: unknown) => {
        logger.error({ event: "worker:close-failed", err: String(e) }, "drain failed");
        process.exitCode = 1;
      });
    },
    {
      onSignal: (signal) => logger.info({ event: "worker:signal", signal }, "signal received; draining"),
      onRepeat: (signal) => {
        logger.warn({ event: "worker:forced-exit", signal }, "second signal: exiting without draining");
        process.exit(1);
      },
    },
  );
  // Everything is closed; should a stray handle keep the event loop alive, do not hang the shutdown.
  setTimeout(() => {
    logger.warn({ event: "worker:exit-forced" }, "still running 5 s after close; exiting");
    process.exit(process.exitCode ?? 0);
  }, 5000).unref();
}
