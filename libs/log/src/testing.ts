/** Test support: a logger whose JSON lines are kept in memory, for tests that assert what was logged. */
import { Writable } from "node:stream";
import { createLogger, type Logger } from "./index.ts";

export interface CapturedLogger {
  logger: Logger;
  /** Every line written so far, parsed. */
  lines: Record<string, unknown>[];
}

export function capturedLogger(service = "test", level = "info"): CapturedLogger {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: createLogger({ service, level, destination }), lines };
}
