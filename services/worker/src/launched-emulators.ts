/**
 * The emulators this worker launches (config `launch`), wired to its metrics: each relaunch counts in
 * farm_emulator_relaunches_total{cause}; the supervisor logs one line per relaunch. The launched
 * emulators register with the worker's adb server, so the device tracker binds them like any other.
 */
import { EmulatorSupervisor } from "@farm/emulator-launcher";
import type { Logger } from "@farm/log";
import type { FarmMetrics } from "@farm/metrics";
import type { WorkerConfig } from "./config.ts";

/** `onBooted(serial)`: a launched emulator finished booting (its gRPC discovery file is written by then). */
export function startLaunchedEmulators(config: WorkerConfig, metrics: FarmMetrics, logger: Logger, onBooted: (serial: string) => void): EmulatorSupervisor | undefined {
  const l = config.launch;
  if (!l) return undefined;
  const sup = new EmulatorSupervisor(
    {
      count: l.count,
      avd: l.avd,
      executable: l.emulator,
      ...(l.snapshot ? { snapshot: l.snapshot } : {}),
      adbHost: config.adbHost,
      adbPort: config.adbPort,
      grpc: config.grpc.mode !== "off",
      basePort: l.basePort,
      bootTimeoutMs: l.bootTimeoutMs,
      healthIntervalMs: l.healthIntervalMs,
      stopGraceMs: Math.min(10_000, Math.max(1_000, config.drainTimeoutMs)),
    },
    { logger, onRelaunch: (e) => metrics.emulatorRelaunch(e.cause), onBooted: (e) => onBooted(e.serial) },
  );
  logger.info({ event: "worker:launch", count: l.count, avd: l.avd, emulator: l.emulator, snapshot: l.snapshot }, "launching emulators");
  sup.start();
  return sup;
}
