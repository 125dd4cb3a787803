/** Farm devices served as OpenEnv environments (a worker's `--openenv-port`): sessions open, steps, and how sessions ended. */
import { Counter, Gauge } from "prom-client";
import { closedLabel } from "../bounded-label.ts";
import type { MetricContext } from "../metric-context.ts";
import { METRIC } from "../names.ts";

/** close: the client's close message; client_lost: the WebSocket went away without one; idle_timeout: no message for the idle timeout; shutdown: the worker closed; error: opening failed. */
export type OpenEnvSessionEnd = "close" | "client_lost" | "idle_timeout" | "shutdown" | "error";
export const OPENENV_SESSION_ENDS: readonly OpenEnvSessionEnd[] = ["close", "client_lost", "idle_timeout", "shutdown", "error"];

export function createOpenEnvMetrics({ registers, report }: MetricContext) {
  const sessions = new Gauge({ name: METRIC.openenvSessions, help: "OpenEnv sessions open on this worker (each holds one device)", registers });
  const steps = new Counter({ name: METRIC.openenvSteps, help: "Steps taken by OpenEnv clients on this worker's devices", registers });
  const ends = new Counter({ name: METRIC.openenvSessionEnds, help: "OpenEnv sessions ended, by reason", labelNames: ["reason"] as const, registers });
  const reason = closedLabel(METRIC.openenvSessionEnds, "reason", OPENENV_SESSION_ENDS, report);
  for (const r of OPENENV_SESSION_ENDS) ends.inc({ reason: r }, 0);
  return {
    /** The number of OpenEnv sessions open now. */
    openenvSessions(n: number): void {
      sessions.set(n);
    },
    /** One step an OpenEnv client took. */
    openenvStep(): void {
      steps.inc();
    },
    /** One OpenEnv session ended (its device went back to the pool). */
    openenvSessionEnded(r: OpenEnvSessionEnd): void {
      ends.inc({ reason: reason(r) });
    },
  };
}
