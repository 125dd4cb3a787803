/**
 * The one snapshot flow both snapshot reset modes share (snapshot-reset.ts: `setup-snapshot`, a snapshot of the
 * setup state before the reset steps; start-snapshot.ts: `start-snapshot`, one after them instead): save a
 * session's snapshot (a failure counted and logged once), and load it, where a failed load is counted, told to the
 * session, forgotten and followed by a full setup, after which the caller saves anew.
 */
import type { Device, StepStatus } from "@farm/adb";
import type { Logger } from "@farm/log";
import { coerceError } from "./errors.ts";

export type SnapshotMode = "setup-snapshot" | "start-snapshot";

/** What the flow needs of a device session (DeviceSession hands it over from its private state). */
export interface SnapshotFlowSession {
  readonly device: Device;
  readonly config: { resetTimeoutMs: number };
  readonly logger: Logger;
  /** Told once per fallback (the metric); `reason` is the failed load's status. */
  onFallback?(reason: StepStatus): void;
  /** Binds again (setup steps included); false if that failed. */
  setupAgain(reason: string): Promise<boolean>;
}

const LABEL: Record<SnapshotMode, string> = { "setup-snapshot": "snapshot", "start-snapshot": "start snapshot" };

function bump(counters: Record<string, number>, key: string): void {
  counters[key] = (counters[key] ?? 0) + 1;
}

/**
 * Saves the snapshot `name()` names; the name, or undefined when it was not saved (an unsafe name, a failed save:
 * counted as `snapshot_save_failed`, one log line). The device must offer snapshots.
 */
export async function saveSnapshot(s: SnapshotFlowSession, counters: Record<string, number>, mode: SnapshotMode, name: () => string): Promise<string | undefined> {
  let failure: { name: string; status: string; message: string } | undefined;
  let named: string | undefined;
  try {
    named = name();
  } catch (e) {
    failure = { name: "(unsafe)", status: "failed_precondition", message: coerceError(e).message };
  }
  if (named !== undefined) {
    const r = await s.device.snapshot!("save", named, { timeoutMs: s.config.resetTimeoutMs });
    if (r.status === "ok") return named;
    failure = { name: named, status: r.status, message: r.message };
  }
  bump(counters, "snapshot_save_failed");
  s.logger.warn({ event: "episode:snapshot-save-failed", mode, ...failure }, `${LABEL[mode]} not saved; resetting by steps`);
  return undefined;
}

/**
 * Loads the session's snapshot `name`: "loaded", or, when it did not load, the fallback (counted as
 * `snapshot_fallback`, logged, told to `onFallback`, `forget()` called) of a full setup: "set_up_again", or `fail`
 * when that setup failed too (the caller ends the episode as reset_failed).
 */
export async function loadSnapshot(s: SnapshotFlowSession, counters: Record<string, number>, mode: SnapshotMode, name: string, forget: () => void): Promise<"loaded" | "set_up_again" | { fail: string }> {
  const r = await s.device.snapshot!("load", name, { timeoutMs: s.config.resetTimeoutMs });
  if (r.status === "ok") return "loaded";
  bump(counters, "snapshot_fallback");
  s.logger.warn({ event: "episode:snapshot-fallback", mode, name, status: r.status, message: r.message }, `${LABEL[mode]} did not load; setup + reset steps`);
  s.onFallback?.(r.status);
  forget();
  if (!(await s.setupAgain(`${LABEL[mode]} ${name} did not load: ${r.message}`))) return { fail: `${LABEL[mode]} ${name} did not load (${r.status}: ${r.message}) and setup failed too` };
  return "set_up_again";
}
