/** Devices and emulators: states, recoveries, transports, snapshot fallbacks, relaunches, how episodes were reset. */
import type { StepStatus } from "@farm/adb";
import { Counter, Gauge } from "prom-client";
import { closedLabel } from "../bounded-label.ts";
import type { MetricContext } from "../metric-context.ts";
import { METRIC } from "../names.ts";
import { ADB_STATUSES, RELAUNCH_CAUSES, RESET_KINDS, RESET_MODES, TRANSPORTS, type RelaunchCause, type ResetKindLabel, type ResetModeLabel, type Transport } from "../vocabulary.ts";

export function createDeviceMetrics(ctx: MetricContext) {
  const { registers, report, valid } = ctx;
  const states = deviceStates(ctx);
  const recoveries = new Counter({
    name: METRIC.recoveries,
    help: "Device recoveries (reconnect, relaunch, …) by cause",
    labelNames: ["cause"] as const,
    registers,
  });
  const deviceTransports = new Gauge({
    name: METRIC.deviceTransports,
    help: "Bound devices by action transport: grpc (the emulator's gRPC endpoint) or adb (the adb server)",
    labelNames: ["transport"] as const,
    registers,
  });
  const transport = closedLabel(METRIC.deviceTransports, "transport", TRANSPORTS, report);
  const snapshotFallbacks = new Counter({
    name: METRIC.snapshotFallbacks,
    help: "Snapshot resets whose snapshot did not load, so the full setup + reset ran, by the load's error kind",
    labelNames: ["reason"] as const,
    registers,
  });
  const fallbackReason = closedLabel(METRIC.snapshotFallbacks, "reason", ADB_STATUSES, report);
  const emulatorRelaunches = new Counter({
    name: METRIC.emulatorRelaunches,
    help: "Emulators the worker launched and relaunched, by cause: exited (or crashed), hung (health check), boot_timeout",
    labelNames: ["cause"] as const,
    registers,
  });
  const relaunchCause = closedLabel(METRIC.emulatorRelaunches, "cause", RELAUNCH_CAUSES, report);
  for (const c of RELAUNCH_CAUSES) emulatorRelaunches.inc({ cause: c }, 0);
  for (const t of TRANSPORTS) deviceTransports.set({ transport: t }, 0);
  for (const kind of ADB_STATUSES) if (kind !== "ok") snapshotFallbacks.inc({ reason: kind }, 0);
  const episodeResets = new Counter({
    name: METRIC.episodeResets,
    help: "Episode starts by reset mode asked for (steps, setup-snapshot, start-snapshot) and how the device was reset (steps, snapshot, start_snapshot, snapshot_fallback)",
    labelNames: ["mode", "kind"] as const,
    registers,
  });
  const resetMode = closedLabel(METRIC.episodeResets, "mode", RESET_MODES, report);
  const resetKind = closedLabel(METRIC.episodeResets, "kind", RESET_KINDS, report);
  for (const mode of RESET_MODES) for (const kind of RESET_KINDS) episodeResets.inc({ mode, kind }, 0);

  return {
    ...states,
    /** Replaces the per-transport device counts (transports absent from `counts` read 0). */
    setDeviceTransports(counts: Partial<Record<Transport, number>>): void {
      for (const t of TRANSPORTS) deviceTransports.set({ transport: t }, 0);
      for (const [t, n] of Object.entries(counts)) if (valid(METRIC.deviceTransports, n)) deviceTransports.inc({ transport: transport(t) }, n);
    },
    /** A snapshot reset fell back to setup + reset; `reason` is the failed load's status. */
    snapshotFallback(reason: StepStatus): void {
      snapshotFallbacks.inc({ reason: fallbackReason(reason) });
    },
    /** An episode started: the reset mode it asked for and how the device was reset. */
    episodeReset(mode: ResetModeLabel, kind: ResetKindLabel): void {
      episodeResets.inc({ mode: resetMode(mode), kind: resetKind(kind) });
    },
    /** The worker relaunched an emulator it launched. */
    emulatorRelaunch(cause: RelaunchCause): void {
      emulatorRelaunches.inc({ cause: relaunchCause(cause) });
    },
    recovery(c: string): void {
      recoveries.inc({ cause: ctx.labels.recoveryCause(METRIC.recoveries, c) });
    },
  };
}

/** farm_devices{state}: set as a whole, or read from a source at every scrape. */
function deviceStates({ registers, valid, labels: { deviceState } }: MetricContext) {
  // Counted when scraped (setDeviceStateSource): a host changes device states thousands of times a second, and
  // counting its devices on each change made every change cost O(devices).
  let deviceStateSource: (() => Record<string, number>) | undefined;
  const devices = new Gauge({
    name: METRIC.devices,
    help: "Devices this process manages, by state",
    labelNames: ["state"] as const,
    registers,
    collect: () => {
      if (deviceStateSource) setDeviceStates(deviceStateSource());
    },
  });
  const setDeviceStates = (counts: Record<string, number>): void => {
    devices.reset();
    for (const [state, n] of Object.entries(counts)) {
      if (valid(METRIC.devices, n)) devices.inc({ state: deviceState(METRIC.devices, state) }, n);
    }
  };
  return {
    /** Replaces all device-state counts: states absent from `counts` drop out. */
    setDeviceStates,
    /** Reads the per-state device counts from `source` at every scrape (instead of setDeviceStates on each change). */
    setDeviceStateSource(source: () => Record<string, number>): void {
      deviceStateSource = source;
    },
  };
}
