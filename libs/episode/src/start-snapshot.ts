/**
 * Start snapshots (reset mode `start-snapshot`): the device is saved once after setup AND the reset steps, and
 * every later episode starts by loading that snapshot, with no reset steps. The snapshot is this session's own
 * (saved before it is ever loaded, so a stale one left on the emulator by another run is overwritten, not
 * trusted), named by task hash, session config and screen. A load that fails falls back to setup + reset steps
 * and saves anew (counted); a save that fails leaves the session resetting by steps (counted, one log line).
 */
import { createHash } from "node:crypto";
import { SNAPSHOT_NAME } from "@farm/adb";
import { loadSnapshot, saveSnapshot, type SnapshotFlowSession } from "./snapshot-flow.ts";
import type { StepsOutcome } from "./step-interpreter.ts";
import type { ResetKind } from "./snapshot-reset.ts";

/** What a start-snapshot reset needs of its session (DeviceSession hands it over from its private state). */
export interface StartSnapshotSession extends SnapshotFlowSession {
  /** This session's start snapshot, once saved; "" after a save failed (reset by steps from then on). */
  startSnapshot: string | undefined;
  /** Episodes run since the last bind; the snapshot must hold setup + reset steps only, so it is saved at 0. */
  readonly episodesSinceBind: number;
  /** The name the snapshot gets (startSnapshotName over this session's task, config and screen). */
  snapshotName(): string;
  /** The task's reset steps, as in mode `steps`. */
  runResetSteps(): Promise<StepsOutcome>;
}

const NO_STEPS: StepsOutcome = { ok: true };

/**
 * `farm-start-<task hash>-<config>-<W>x<H>`: two tasks, two configs (what setup installs from, its seed) or two
 * screens never share a snapshot. Throws on a name the emulator would not take as a file name.
 */
export function startSnapshotName(taskHash: string, configKey: unknown, screen: { width: number; height: number }): string {
  const cfg = createHash("sha256").update(JSON.stringify(configKey ?? null)).digest("hex").slice(0, 8);
  const hash = taskHash.replace(/[^A-Za-z0-9]/g, "").slice(0, 16) || "task";
  const side = (v: number) => (Number.isInteger(v) && v > 0 && v <= 100_000 ? String(v) : "?");
  const name = `farm-start-${hash}-${cfg}-${side(screen.width)}x${side(screen.height)}`;
  if (!SNAPSHOT_NAME.test(name)) throw new RangeError(`start snapshot name ${JSON.stringify(name.slice(0, 80))} is not a safe snapshot name (${SNAPSHOT_NAME.source})`);
  return name;
}

/** The reset of one episode in mode `start-snapshot`; `fail` when even the fallback's setup failed. */
export async function startSnapshotReset(s: StartSnapshotSession, counters: Record<string, number>): Promise<{ steps: StepsOutcome; kind: ResetKind } | { fail: string }> {
  const dev = s.device;
  if (!dev.snapshot || s.startSnapshot === "") return { steps: await s.runResetSteps(), kind: "steps" };
  if (s.startSnapshot !== undefined) {
    const loaded = await loadSnapshot(s, counters, "start-snapshot", s.startSnapshot, () => (s.startSnapshot = undefined));
    if (loaded === "loaded") return { steps: NO_STEPS, kind: "start_snapshot" };
    if (loaded !== "set_up_again") return loaded;
    return saveAfterReset(s, counters, "snapshot_fallback");
  }
  // The first start-snapshot episode of a session that already ran others: set up again, so the snapshot holds
  // setup + reset steps and nothing an earlier episode left behind.
  if (s.episodesSinceBind > 0 && !(await s.setupAgain("start snapshot: a fresh setup before saving it"))) return { fail: "setup before saving the start snapshot failed" };
  return saveAfterReset(s, counters, "steps");
}

/** Reset steps, then the save; the episode itself starts from exactly the saved state. */
async function saveAfterReset(s: StartSnapshotSession, counters: Record<string, number>, kind: ResetKind): Promise<{ steps: StepsOutcome; kind: ResetKind }> {
  const steps = await s.runResetSteps();
  if (!steps.ok) return { steps, kind };
  const name = await saveSnapshot(s, counters, "start-snapshot", () => s.snapshotName());
  // A save that failed leaves this session resetting by steps ("").
  s.startSnapshot = name ?? "";
  if (name !== undefined) {
    counters.start_snapshot_saved = (counters.start_snapshot_saved ?? 0) + 1;
    s.logger.info({ event: "episode:start-snapshot-saved", name }, "start snapshot saved");
  }
  return { steps, kind };
}
