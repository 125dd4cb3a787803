/**
 * Snapshot resets (`resetFromSnapshot`): the first episode after setup saves a snapshot of the device
 * (named by the task hash, once per session = task and device), and every later reset loads it before
 * the task's reset steps. Over gRPC SnapshotService when the device has it, else the emulator console.
 * A snapshot that cannot be saved or loaded falls back to the full setup (recovery's bind) + reset steps,
 * counted as `snapshot_fallback` in the episode's counters.
 */
import type { Device, StepStatus } from "@farm/adb";
import type { Logger } from "@farm/log";

/** What a snapshot reset needs of its session (DeviceSession hands it over from its private state). */
export interface SnapshotSession {
  readonly device: Device;
  readonly task: { hash: string };
  readonly config: { resetTimeoutMs: number };
  readonly logger: Logger;
  /** The snapshot of the setup state, once saved. */
  snapshotSaved: string | undefined;
  /** Episodes run since the last bind (setup); a snapshot is taken only at 0. */
  readonly episodesSinceBind: number;
  /** Told once per fallback (for the metric); `reason` is the failed load's status. */
  onFallback?(reason: StepStatus): void;
  /** Binds again (setup steps included); false if that failed. */
  setupAgain(reason: string): Promise<boolean>;
}

/** How an episode's device was reset (the trajectory's `resetKind`). */
/** `start_snapshot`: the start snapshot (setup + reset steps) loaded, no reset steps (start-snapshot.ts). */
export type ResetKind = "steps" | "snapshot" | "start_snapshot" | "snapshot_fallback";

export function snapshotNameOf(taskHash: string): string {
  return `farm-${taskHash.replace(/[^A-Za-z0-9]/g, "").slice(0, 24) || "task"}`;
}

/**
 * Runs before the reset steps. Returns how the device was reset, or a failure detail when even the
 * fallback's setup failed (the caller ends the episode as reset_failed).
 */
export async function snapshotBeforeReset(s: SnapshotSession, counters: Record<string, number>): Promise<{ kind: ResetKind } | { fail: string }> {
  const dev = s.device;
  const name = snapshotNameOf(s.task.hash);
  const timeoutMs = s.config.resetTimeoutMs;
  if (!dev.snapshot) return { kind: "steps" };
  if (!s.snapshotSaved) {
    // Only right after setup is the device in the state a snapshot must hold.
    if (s.episodesSinceBind > 0) return { kind: "steps" };
    const r = await dev.snapshot("save", name, { timeoutMs });
    if (r.status === "ok") s.snapshotSaved = name;
    else {
      counters.snapshot_save_failed = (counters.snapshot_save_failed ?? 0) + 1;
      s.logger.warn({ event: "episode:snapshot-save-failed", name, status: r.status, message: r.message }, "snapshot save failed; resetting by steps");
    }
    return { kind: "steps" };
  }
  const r = await dev.snapshot("load", s.snapshotSaved, { timeoutMs });
  if (r.status === "ok") return { kind: "snapshot" };
  counters.snapshot_fallback = (counters.snapshot_fallback ?? 0) + 1;
  s.logger.warn({ event: "episode:snapshot-fallback", name: s.snapshotSaved, status: r.status, message: r.message }, "snapshot load failed; full setup + reset");
  s.onFallback?.(r.status);
  s.snapshotSaved = undefined;
  const ok = await s.setupAgain(`snapshot ${name} did not load: ${r.message}`);
  if (!ok) return { fail: `snapshot ${name} did not load (${r.status}: ${r.message}) and setup failed too` };
  // The device is in its setup state again: save it anew for the next resets.
  const again = await dev.snapshot("save", name, { timeoutMs });
  if (again.status === "ok") s.snapshotSaved = name;
  else counters.snapshot_save_failed = (counters.snapshot_save_failed ?? 0) + 1;
  return { kind: "snapshot_fallback" };
}
