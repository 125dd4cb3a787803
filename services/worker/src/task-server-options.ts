/**
 * How the worker lets a family's task server (outside task code over the task protocol) reach its episodes: the host
 * allow-list, and what its device calls count in metrics and say in the log (one line per phase, not per call).
 */
import type { Logger } from "@farm/log";
import type { FarmMetrics } from "@farm/metrics";
import type { RemoteTaskOptions, TaskProtocolEvent } from "@farm/task-protocol";
import { terminalSafe } from "@farm/terminal-text";

export function taskServerOptions(allowedHosts: readonly string[], metrics: Pick<FarmMetrics, "taskServerCall" | "taskServerRefusal">, log: Logger): RemoteTaskOptions {
  return {
    allowedHosts,
    onEvent: (e: TaskProtocolEvent) => {
      if (e.kind === "device_call") metrics.taskServerCall(e.command, e.status);
      else if (e.kind === "refused") metrics.taskServerRefusal(e.command);
      else {
        const line = { event: "task-server:phase", phase: e.phase, outcome: e.outcome, calls: e.calls, ms: Math.round(e.durationMs), ...(e.message ? { detail: terminalSafe(e.message) } : {}) };
        if (e.outcome === "ok") log.info(line, "task server phase done");
        else log.warn(line, "task server phase failed");
      }
    },
  };
}
