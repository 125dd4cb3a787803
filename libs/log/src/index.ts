/**
 * @module @farm/log
 * Structured JSON logs (pino) for every farm process. One root logger per process; components take a
 * child with `component` set, so every line says which part of the farm wrote it.
 *
 *   const log = createLogger({ service: "worker" }).child({ component: "episode" });
 *   log.info({ event: "episode:end", taskId, outcome }, "episode finished");
 */
import { pino, type Logger, type DestinationStream } from "pino";

export type { Logger };

export { LOG_LEVELS, type LogLevel } from "./levels.ts";

export interface LoggerOptions {
  service: string;
  /** Default "info" (services take FARM_LOG_LEVEL in their config). "silent" turns logging off. */
  level?: string;
  /** Default: stderr, so command output on stdout stays machine-readable. */
  destination?: DestinationStream;
}

export function createLogger(opts: LoggerOptions): Logger {
  const level = opts.level ?? "info";
  return pino({ level, base: { service: opts.service, pid: process.pid } }, opts.destination ?? pino.destination(2));
}

/** A logger that writes nothing; the default for libraries used without one. */
export const silentLogger: Logger = pino({ level: "silent" });
