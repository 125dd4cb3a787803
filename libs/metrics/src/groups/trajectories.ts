/** Trajectory files written, and their bytes. */
import { Counter } from "prom-client";
import type { MetricContext } from "../metric-context.ts";
import { METRIC } from "../names.ts";

export function createTrajectoryMetrics({ registers, valid }: MetricContext) {
  const trajectoryBytes = new Counter({ name: METRIC.trajectoryBytes, help: "Bytes of trajectory files written", registers });
  const trajectoryFiles = new Counter({ name: METRIC.trajectoryFiles, help: "Trajectory files written", registers });
  return {
    trajectoryWritten(w: { bytes: number; files?: number }): void {
      if (valid(METRIC.trajectoryBytes, w.bytes)) trajectoryBytes.inc(w.bytes);
      const files = w.files ?? 1;
      if (valid(METRIC.trajectoryFiles, files)) trajectoryFiles.inc(files);
    },
  };
}
