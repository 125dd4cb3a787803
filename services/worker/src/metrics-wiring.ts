/**
 * Runner events and adb driver calls → farm metrics. Episodes themselves are counted when committed
 * (see processor.ts), so farm_episodes_total counts each episode of a campaign once, retries aside.
 */
import type { AdbCallEvent } from "@farm/adb";
import type { EventHook } from "@farm/episode";
import type { FarmMetrics } from "@farm/metrics";

type AdbStatus = Parameters<FarmMetrics["adbCall"]>[0]["status"];

export function episodeEventsToMetrics(metrics: FarmMetrics): EventHook {
  const lastCause = new Map<string, string>();
  return (e) => {
    switch (e.type) {
      case "step":
        metrics.stepPhase("policy", e.phasesMs.policy / 1000);
        metrics.stepPhase("action", e.phasesMs.action / 1000);
        metrics.stepPhase("observation", e.phasesMs.observation / 1000);
        metrics.stepPhase("log", e.phasesMs.log / 1000);
        if (e.phasesMs.a11yRead !== undefined) metrics.stepPhase("a11y_read", e.phasesMs.a11yRead / 1000);
        if (e.phasesMs.a11yDerive !== undefined) metrics.stepPhase("a11y_derive", e.phasesMs.a11yDerive / 1000);
        if (e.phasesMs.total !== undefined) metrics.stepPhase("step", e.phasesMs.total / 1000);
        if (e.uiAction) metrics.uiAction(e.uiAction);
        if (e.settle) metrics.stepSettle(e.settle.kind, e.settle.ms / 1000, e.settle.capped);
        if (e.policyUsage) metrics.policyUsage(e.policyUsage);
        break;
      case "episode:start":
        metrics.episodeReset(e.resetMode ?? "steps", e.resetKind ?? "steps");
        break;
      case "episode:end":
        lastCause.set(e.serial, e.cause);
        break;
      case "device:recovery":
        metrics.recovery(lastCause.get(e.serial) ?? "bind_failed");
        break;
      case "log:malformed":
        metrics.logLineMalformed();
        break;
      case "snapshot:fallback":
        metrics.snapshotFallback(e.reason);
        break;
      case "extra:dropped":
        metrics.extraDropped(e.taskId);
        break;
      default:
        break;
    }
  };
}

/** adb driver `onCall` → farm_adb_calls_total / errors / duration (ops like `step:tap` become `step_tap`). */
export function adbCallsToMetrics(metrics: FarmMetrics): (ev: AdbCallEvent) => void {
  // The driver's ops are a small closed set, reported on every action: normalise each once.
  const ops = new Map<string, string>();
  const opLabel = (op: string): string => {
    let label = ops.get(op);
    if (label === undefined) {
      label = op.replace(/[^a-z0-9_]/gi, "_").toLowerCase();
      if (ops.size < 256) ops.set(op, label);
    }
    return label;
  };
  return (ev) => metrics.adbCall({ op: opLabel(ev.op), status: ev.status as AdbStatus, seconds: ev.durationMs / 1000 });
}
