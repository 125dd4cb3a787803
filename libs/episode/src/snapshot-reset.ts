/**
 * Snapshot resets (`resetFromSnapshot`): the first episode after setup saves a snapshot of the device
 * (named by the task hash, once per session = task and device), and every later reset loads it before
 * the task's reset steps. Over gRPC SnapshotService when the device has it, else the emulator console.
 * A snapshot that cannot be saved or loaded falls back to the full setup (recovery's bind) + reset steps,
 * counted as `snapshot_fallback` in the episode's counters.
 */
import { loadSnapshot, saveSnapshot, type SnapshotFlowSession } from "./snapshot-flow.ts";

/** What a snapshot reset needs of its session (DeviceSession hands it over from its private state). */
export interface SnapshotSession extends SnapshotFlowSession {
  readonly task: { hash: string };
  /** The snapshot of the setup state, once saved. */
  snapshotSaved: string | undefined;
  /** Episodes run since the last bind (setup); a snapshot is taken only at 0. */
  readonly episodesSinceBind: number;
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
  const name = snapshotNameOf(s.task.hash);
  if (!s.device.snapshot) return { kind: "steps" };
  if (!s.snapshotSaved) {
    // Only right after setup is the device in the state a snapshot must hold.
    if (s.episodesSinceBind === 0) s.snapshotSaved = await saveSnapshot(s, counters, "setup-snapshot", () => name);
    return { kind: "steps" };
  }
  const loaded = await loadSnapshot(s, counters, "setup-snapshot", s.snapshotSaved, () => (s.snapshotSaved = undefined));
  if (loaded === "loaded") return { kind: "snapshot" };
  if (loaded !== "set_up_again") return loaded;
  // The device is in its setup state again: save it anew for the next resets.
  s.snapshotSaved = await saveSnapshot(s, counters, "setup-snapshot", () => name);
  return { kind: "snapshot_fallback" };
}
