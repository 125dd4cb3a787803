/** One step's phases, and what an agent's steps add: answers that were UI actions, reads of the screen as a tree. */
import { Counter, Histogram } from "prom-client";
import { SETTLE_BUCKETS_SEC, STEP_PHASE_BUCKETS_SEC } from "../buckets.ts";
import { boundHistogramPerLabel } from "../bound-metrics.ts";
import { closedLabel } from "../bounded-label.ts";
import type { MetricContext } from "../metric-context.ts";
import { METRIC } from "../names.ts";
import { A11Y_FORWARDER_FALLBACKS, A11Y_FORWARDER_REFUSALS, SETTLE_POLICY_KINDS, SCREEN_TREE_OUTCOMES, SCREEN_TREE_SOURCES, STEP_PHASES, UI_ACTION_OPS, type StepPhase } from "../vocabulary.ts";

export function createStepMetrics({ registers, report, valid }: MetricContext) {
  const stepPhaseDuration = new Histogram({
    name: METRIC.stepPhaseDuration,
    help: "Duration of one phase of one step: policy, action, observation, log (waiting for logcat); a11y_read and a11y_derive (within observation: the device's tree, the farm's work on it); step (the whole step)",
    labelNames: ["phase"] as const,
    buckets: STEP_PHASE_BUCKETS_SEC,
    registers,
  });
  const phase = closedLabel(METRIC.stepPhaseDuration, "phase", STEP_PHASES, report);
  /** One bound observer per phase (the hot path: 3-4 observations per step). */
  const phaseObserver = boundHistogramPerLabel(stepPhaseDuration, "phase", STEP_PHASE_BUCKETS_SEC);
  const stepSettle = new Histogram({
    name: METRIC.stepSettle,
    help: "Time a step waited for the screen to settle after its action (issue 36), by settle policy kind and whether it stopped at its cap",
    labelNames: ["policy", "capped"] as const,
    buckets: SETTLE_BUCKETS_SEC,
    registers,
  });
  const settlesCapped = new Counter({
    name: METRIC.settlesCapped,
    help: "Steps whose settle policy gave up at its cap (the screen never settled; the observation was taken anyway), by settle policy kind",
    labelNames: ["policy"] as const,
    registers,
  });
  const settlePolicy = closedLabel(METRIC.stepSettle, "policy", SETTLE_POLICY_KINDS, report);
  return {
    stepPhase(p: StepPhase, seconds: number): void {
      if (!valid(METRIC.stepPhaseDuration, seconds)) return;
      phaseObserver(phase(p))(seconds);
    },
    /** One step's settle: its policy kind, time and whether it hit the cap. */
    stepSettle(policy: string, seconds: number, capped: boolean): void {
      if (!valid(METRIC.stepSettle, seconds)) return;
      const kind = settlePolicy(policy);
      stepSettle.observe({ policy: kind, capped: capped ? "true" : "false" }, seconds);
      if (capped) settlesCapped.inc({ policy: kind });
    },
  };
}

export function createAgentMetrics({ registers, report }: MetricContext) {
  const uiActions = new Counter({
    name: METRIC.uiActions,
    help: "Agent answers that were not AndroidEnv touches, by what they came to on the device (op) or invalid",
    labelNames: ["op"] as const,
    registers,
  });
  const uiOp = closedLabel(METRIC.uiActions, "op", UI_ACTION_OPS, report);
  for (const op of UI_ACTION_OPS) uiActions.inc({ op }, 0);
  const screenTreeReads = new Counter({
    name: METRIC.screenTreeReads,
    help: "Reads of the screen as an accessibility tree, by source (uiautomator dump, AndroidEnv's forwarder) and outcome",
    labelNames: ["source", "outcome"] as const,
    registers,
  });
  const forwarderRefusals = new Counter({
    name: METRIC.a11yForwarderRefusals,
    help: "Accessibility forwarder streams the hub refused: a port of no device, a wrong token, no token from a device that proved itself, a second unproven stream",
    labelNames: ["reason"] as const,
    registers,
  });
  const refusalReason = closedLabel(METRIC.a11yForwarderRefusals, "reason", A11Y_FORWARDER_REFUSALS, report);
  for (const reason of A11Y_FORWARDER_REFUSALS) forwarderRefusals.inc({ reason }, 0);
  const forwarderFallbacks = new Counter({
    name: METRIC.a11yForwarderFallbacks,
    help: "Devices whose screen trees fell back to uiautomator although the worker reads them from the accessibility forwarder, by reason (one per device and fall, never per retry)",
    labelNames: ["reason"] as const,
    registers,
  });
  const fallbackReason = closedLabel(METRIC.a11yForwarderFallbacks, "reason", A11Y_FORWARDER_FALLBACKS, report);
  for (const reason of A11Y_FORWARDER_FALLBACKS) forwarderFallbacks.inc({ reason }, 0);
  const treeSource = closedLabel(METRIC.screenTreeReads, "source", SCREEN_TREE_SOURCES, report);
  const treeOutcome = closedLabel(METRIC.screenTreeReads, "outcome", SCREEN_TREE_OUTCOMES, report);
  return {
    /** One read of the screen as a tree. */
    screenTreeRead(source: string, outcome: string): void {
      screenTreeReads.inc({ source: treeSource(source), outcome: treeOutcome(outcome) });
    },
    /** One forwarder stream the accessibility hub refused (wire it to A11yForwarderHub.onRefused). */
    a11yForwarderRefused(reason: string): void {
      forwarderRefusals.inc({ reason: refusalReason(reason) });
    },
    /** A device's trees fell back to uiautomator (the worker's forwarder set-up; one per device and fall). */
    a11yForwarderFallback(reason: string): void {
      forwarderFallbacks.inc({ reason: fallbackReason(reason) });
    },
    /** One agent answer that was a UI action (its resolved op) or invalid. */
    uiAction(op: string): void {
      uiActions.inc({ op: uiOp(op) });
    },
  };
}
