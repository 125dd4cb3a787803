/** adb calls: counts by operation and status, failures by kind, durations by operation. */
import type { StepStatus } from "@farm/adb";
import { Counter, Histogram } from "prom-client";
import { ADB_CALL_BUCKETS_SEC } from "../buckets.ts";
import { boundCounterPerLabels, boundHistogramPerLabel } from "../bound-metrics.ts";
import { closedLabel } from "../bounded-label.ts";
import type { MetricContext } from "../metric-context.ts";
import { METRIC } from "../names.ts";
import { ADB_STATUSES } from "../vocabulary.ts";

export interface AdbCall {
  /** The kind of call, snake_case and from a small set: "shell", "screenshot", "install", "start_activity", … */
  op: string;
  /** "ok" or the error kind ("adb_error", "timeout", …). */
  status: StepStatus;
  seconds: number;
}

export function createAdbMetrics({ registers, report, valid, labels: { adbOp } }: MetricContext) {
  const adbCalls = new Counter({
    name: METRIC.adbCalls,
    help: "adb calls by operation and status (ok or the error kind)",
    labelNames: ["op", "status"] as const,
    registers,
  });
  const adbStatus = closedLabel(METRIC.adbCalls, "status", ADB_STATUSES, report);
  /** Every action counts an adb call: one bound counter per (op, status), both bounded label sets. */
  const adbCallCounter = boundCounterPerLabels(adbCalls);
  const adbErrors = new Counter({
    name: METRIC.adbErrors,
    help: "Failed adb calls by error kind",
    labelNames: ["kind"] as const,
    registers,
  });
  // Zero series for the closed error set, so rate() and alerts see them before the first error.
  for (const kind of ADB_STATUSES) if (kind !== "ok") adbErrors.inc({ kind }, 0);
  const adbDuration = new Histogram({
    name: METRIC.adbCallDuration,
    help: "Duration of adb calls by operation",
    labelNames: ["op"] as const,
    buckets: ADB_CALL_BUCKETS_SEC,
    registers,
  });
  /** Every action reports an adb call: one bound observer per op instead of prom-client's per-call label hashing. */
  const adbDurationObserver = boundHistogramPerLabel(adbDuration, "op", ADB_CALL_BUCKETS_SEC);
  return {
    adbCall(c: AdbCall): void {
      const op = adbOp(METRIC.adbCalls, c.op);
      const status = adbStatus(c.status);
      adbCallCounter({ op, status })();
      if (status !== "ok") adbErrors.inc({ kind: status });
      if (valid(METRIC.adbCallDuration, c.seconds)) adbDurationObserver(op)(c.seconds);
    },
  };
}
