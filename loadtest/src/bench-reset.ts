/**
 * `farm bench reset [--heavy] [--episodes N] [--profile emulator-adb] [--transport grpc|adb]`: what it costs to
 * start an episode in each reset mode, on one simulated emulator (in a child process, with the profile's
 * latencies: `emulator-adb` gives adb commands their delays and snapshot loads a real emulator's 0.65 s), one
 * session, the three modes alternating round by round (each round in another order, so drift spreads evenly):
 *   steps           the task's reset steps;
 *   setup-snapshot  a snapshot of the setup state loaded, then the reset steps;
 *   start-snapshot  the snapshot taken once after setup + reset steps loaded, no reset steps.
 * Each figure is the runner's own `resetMs`: everything up to FIRST (lifting a finger, the load and/or the reset
 * steps, the orientation, the first observation, the policy's reset). Classic 2048 by default; `--heavy`: tasks/classic_2048_heavy_reset.textproto (data cleared
 * and the APK reinstalled at every reset). Where a start-snapshot reset's time goes is printed from the adb
 * driver's own call timings (the load call vs the rest).
 * Last line: `steps_reset_p50_ms=… setup_snapshot_p50_ms=… start_snapshot_p50_ms=… speedup=<steps/start>`.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AdbDriver } from "@farm/adb";
import { DeviceSession, type EpisodeTrajectory } from "@farm/episode";
import { startAdbServer } from "@farm/local-services";
import { defaultSnapshotDir } from "@farm/simulator";
import { randomPolicy } from "@farm/policy";
import { loadTaskFile, type ResetMode } from "@farm/task";
import { intOpt, profileOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { startSimChild } from "./sim-child.ts";
import { fmtMs, latencyTable, quantiles } from "./stats.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const MODES: readonly ResetMode[] = ["steps", "setup-snapshot", "start-snapshot"];
/** The resetKind a mode's reset must have to be measured (a fallback or a save is not the mode's cost). */
const EXPECTED_KIND: Record<ResetMode, EpisodeTrajectory["resetKind"]> = { steps: "steps", "setup-snapshot": "snapshot", "start-snapshot": "start_snapshot" };

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const episodes = intOpt(opts, "episodes", 8);
    const profile = profileOpt({ profile: "emulator-adb", ...opts });
    const heavy = opts.heavy === true;
    const transport = typeof opts.transport === "string" ? opts.transport : "grpc";
    if (transport !== "grpc" && transport !== "adb") throw new Error(`--transport must be grpc or adb, got ${transport}`);
    const taskFile = heavy ? "tasks/classic_2048_heavy_reset.textproto" : "tasks/classic_2048.textproto";
    const startedAt = Date.now();
    const adb = await startAdbServer();
    const sim = await startSimChild(1, adb.port, profile);
    const snapshotCalls = new Map<string, number[]>();
    const driver = new AdbDriver({
      port: adb.port,
      grpc: transport === "grpc" ? { mode: "config", endpoints: sim.grpcEndpoints } : { mode: "off" },
      events: { onCall: (ev) => ev.op.startsWith("snapshot_") && ev.status === "ok" && void snapshotCalls.set(ev.op, [...(snapshotCalls.get(ev.op) ?? []), ev.durationMs]) },
    });
    try {
      const task = loadTaskFile(path.join(REPO, taskFile));
      const s = await DeviceSession.open({ device: driver.device(sim.serials[0]!), task, config: { settleMs: 100, apkDirs: [path.join(REPO, "tasks/apks")] } });
      if (s.state !== "ready") throw new Error(`device could not be set up: ${s.unusableReason}`);
      const ms = new Map<ResetMode, number[]>(MODES.map((m) => [m, []]));
      const kinds: Record<string, number> = {};
      let i = 0;
      const one = async (mode: ResetMode) => {
        const t = await s.runEpisode({ seed: i, index: i, policy: randomPolicy({ seed: i }), resetMode: mode, limits: { maxEpisodeSteps: 2 } });
        i++;
        if (t.cause === "reset_failed") throw new Error(`reset (${mode}) failed: ${t.causeDetail}`);
        kinds[`${mode}/${t.resetKind}`] = (kinds[`${mode}/${t.resetKind}`] ?? 0) + 1;
        if (t.resetKind === EXPECTED_KIND[mode]) ms.get(mode)!.push(t.resetMs!);
      };
      // Not measured: the first setup-snapshot episode saves the setup snapshot (right after setup), the first
      // start-snapshot one sets up again and saves the start snapshot after the reset steps.
      await one("setup-snapshot");
      await one("start-snapshot");
      snapshotCalls.clear();
      for (let k = 0; k < episodes; k++) for (let j = 0; j < MODES.length; j++) await one(MODES[(k + j) % MODES.length]!);
      await s.close();
      const q = (m: ResetMode) => quantiles(ms.get(m)!);
      const load = quantiles(snapshotCalls.get("snapshot_load") ?? []);
      console.log(`reset: ${task.task.name || task.task.id} (${taskFile}) on one simulated emulator (profile ${profile}, snapshots over ${transport === "grpc" ? "gRPC SnapshotService" : "the console (adb emu)"}), ${episodes} episodes per mode, alternating; resets: ${JSON.stringify(kinds)}`);
      for (const line of latencyTable("reset (the runner's resetMs)", 44, [
        { name: "steps: the reset steps", q: q("steps") },
        { name: "setup-snapshot: load + the reset steps", q: q("setup-snapshot") },
        { name: "start-snapshot: load, no reset steps", q: q("start-snapshot") },
        { name: "  of which the snapshot load call (both)", q: load },
      ])) console.log(line);
      const steps = q("steps").p50;
      const start = q("start-snapshot").p50;
      const speedup = steps / start;
      const goal = heavy ? 2 : 1;
      console.log(`goal (speedup >= ${goal} ${heavy ? "on the heavy task" : "on Classic 2048"}): ${speedup >= goal ? "met" : "NOT met"}`);
      console.log(`steps_reset_p50_ms=${fmtMs(steps)} setup_snapshot_p50_ms=${fmtMs(q("setup-snapshot").p50)} start_snapshot_p50_ms=${fmtMs(start)} speedup=${Number.isFinite(speedup) ? speedup.toFixed(2) : "n/a"}`);
    } finally {
      await driver.close();
      await sim.close();
      await adb.close();
      await removeOwnSnapshots(sim.serials[0], startedAt);
    }
  },
};

/** The snapshots this run's device saved (its own folder, `farm-` names written since the start): disk is not left behind. */
async function removeOwnSnapshots(serial: string | undefined, sinceMs: number): Promise<void> {
  if (!serial) return;
  const dir = defaultSnapshotDir(serial);
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isDirectory() || !e.name.startsWith("farm-")) continue;
    const st = await fs.stat(path.join(dir, e.name)).catch(() => undefined);
    if (st && st.mtimeMs >= sinceMs) await fs.rm(path.join(dir, e.name), { recursive: true, force: true });
  }
}
