/** Human demonstrations (the `human` policy): operator pages open, leases taken or refused, abandoned episodes, relayed actions. */
import { Counter, Gauge } from "prom-client";
import { closedLabel } from "../bounded-label.ts";
import type { MetricContext } from "../metric-context.ts";
import { METRIC } from "../names.ts";

/** An open operator page: driving (the lease holder) or watching read-only. */
export const OPERATOR_SESSION_MODES = ["drive", "watch"] as const;
/** A lease request: granted (new), renewed (the holder again, e.g. a reopened tab), refused (another operator holds it), gone (not waiting). */
export const OPERATOR_LEASE_RESULTS = ["granted", "renewed", "refused", "gone"] as const;
/** Why an operator's episode ended abandoned: the page stayed closed past the grace, the step idled past the limit, nobody came, or the operator left. */
export const OPERATOR_ABANDON_REASONS = ["grace_expired", "idle", "no_operator", "released"] as const;
/** A relayed action: accepted, or refused (not the lease holder, stale step, bad body). */
export const OPERATOR_ACTION_RESULTS = ["relayed", "refused_not_holder", "refused_stale", "refused_bad"] as const;

export function createOperatorMetrics({ registers, report }: MetricContext) {
  const sessions = new Gauge({ name: METRIC.operatorSessions, help: "Operator pages open on the scheduler, by mode (drive: the lease holder; watch: read-only)", labelNames: ["mode"] as const, registers });
  const leases = new Counter({ name: METRIC.operatorLeases, help: "Operator lease requests, by result", labelNames: ["result"] as const, registers });
  const abandons = new Counter({ name: METRIC.operatorAbandons, help: "Human episodes that ended operator_abandoned, by reason", labelNames: ["reason"] as const, registers });
  const actions = new Counter({ name: METRIC.operatorActions, help: "Operator actions the scheduler received, by result", labelNames: ["result"] as const, registers });
  const mode = closedLabel(METRIC.operatorSessions, "mode", OPERATOR_SESSION_MODES, report);
  const lease = closedLabel(METRIC.operatorLeases, "result", OPERATOR_LEASE_RESULTS, report);
  const reason = closedLabel(METRIC.operatorAbandons, "reason", OPERATOR_ABANDON_REASONS, report);
  const action = closedLabel(METRIC.operatorActions, "result", OPERATOR_ACTION_RESULTS, report);
  for (const m of OPERATOR_SESSION_MODES) sessions.set({ mode: m }, 0);
  return {
    operatorSession(m: string, delta: 1 | -1): void {
      sessions.inc({ mode: mode(m) }, delta);
    },
    operatorLease(r: string): void {
      leases.inc({ result: lease(r) });
    },
    operatorAbandon(r: string): void {
      abandons.inc({ reason: reason(r) });
    },
    operatorAction(r: string): void {
      actions.inc({ result: action(r) });
    },
  };
}
