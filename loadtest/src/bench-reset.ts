/**
 * `farm bench reset [--episodes N] [--profile emulator-adb] [--transport grpc|adb]`: what it costs to start an
 * episode from a clean device, on one simulated emulator (in a child process, with the profile's latencies:
 * `emulator-adb` gives adb commands and snapshot loads a real emulator's delays), Classic 2048, measured in
 * one run, alternating:
 *   (a) replaying setup: the task's setup steps (a fresh bind: install, grant, …) + its reset steps, what a
 *       farm without snapshots does to get the device back to the state setup left;
 *   (b) a snapshot of that state loaded + the reset steps (`resetFromSnapshot`).
 * The claim is "farms that reset by snapshot start episodes in under a second instead of replaying
 * setup", so (a) is the baseline. The task's reset steps alone (no setup, state left by earlier episodes
 * kept) are printed beside them for reference; they are not a clean start.
 * Last line: `steps_reset_p50_ms=<a> snapshot_reset_p50_ms=<b> speedup=<a/b>`.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AdbDriver } from "@farm/adb";
import { DeviceSession } from "@farm/episode";
import { startAdbServer } from "@farm/local-services";
import { randomPolicy } from "@farm/policy";
import { loadTaskFile } from "@farm/task";
import { intOpt, profileOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { startSimChild } from "./sim-child.ts";
import { fmtMs, latencyTable, quantiles } from "./stats.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const episodes = intOpt(opts, "episodes", 8);
    const profile = profileOpt({ profile: "emulator-adb", ...opts });
    const transport = typeof opts.transport === "string" ? opts.transport : "grpc";
    if (transport !== "grpc" && transport !== "adb") throw new Error(`--transport must be grpc or adb, got ${transport}`);
    const adb = await startAdbServer();
    const sim = await startSimChild(1, adb.port, profile);
    const driver = new AdbDriver({ port: adb.port, grpc: transport === "grpc" ? { mode: "config", endpoints: sim.grpcEndpoints } : { mode: "off" } });
    try {
      const task = loadTaskFile(path.join(REPO, "tasks/classic_2048.textproto"));
      const sessionOpts = { device: driver.device(sim.serials[0]!), task, config: { settleMs: 100, apkDirs: [path.join(REPO, "tasks/apks")] } };
      const s = await DeviceSession.open(sessionOpts);
      if (s.state !== "ready") throw new Error(`device could not be set up: ${s.unusableReason}`);
      const replayMs: number[] = [];
      const stepsOnlyMs: number[] = [];
      const snapMs: number[] = [];
      const kinds: Record<string, number> = {};
      let i = 0;
      const one = async (session: DeviceSession, fromSnapshot: boolean) => {
        const t = await session.runEpisode({ seed: i, index: i, policy: randomPolicy({ seed: i }), resetFromSnapshot: fromSnapshot, limits: { maxEpisodeSteps: 2 } });
        i++;
        if (t.cause === "reset_failed") throw new Error(`reset failed: ${t.causeDetail}`);
        kinds[t.resetKind ?? "?"] = (kinds[t.resetKind ?? "?"] ?? 0) + 1;
        return t;
      };
      // The first snapshot episode right after setup saves the snapshot (its own reset is by steps).
      await one(s, true);
      for (let k = 0; k < episodes; k++) {
        const a = await one(s, true);
        if (a.resetKind === "snapshot") snapMs.push(a.resetMs!);
        // Replaying setup: a fresh session binds (setup steps), then its episode's reset steps.
        const t0 = performance.now();
        const fresh = await DeviceSession.open(sessionOpts);
        const setupMs = performance.now() - t0;
        if (fresh.state !== "ready") throw new Error(`setup replay failed: ${fresh.unusableReason}`);
        const b = await one(fresh, false);
        replayMs.push(setupMs + b.resetMs!);
        stepsOnlyMs.push(b.resetMs!);
        await fresh.close();
      }
      await s.close();
      const steps = quantiles(replayMs);
      const snap = quantiles(snapMs);
      console.log(`reset: Classic 2048 on one simulated emulator (profile ${profile}, snapshots over ${transport === "grpc" ? "gRPC SnapshotService" : "the console (adb emu)"}), ${episodes} episodes each, alternating; resets: ${JSON.stringify(kinds)}`);
      for (const line of latencyTable("reset", 40, [
        { name: "(a) setup replay + reset steps", q: steps },
        { name: "(b) snapshot load + reset steps", q: snap },
        { name: "(ref) reset steps alone (not clean)", q: quantiles(stepsOnlyMs) },
      ])) console.log(line);
      console.log(`goal (a snapshot start under a second): ${snap.p50 < 1000 ? "met" : "NOT met"}`);
      const speedup = steps.p50 / snap.p50;
      console.log(`steps_reset_p50_ms=${fmtMs(steps.p50)} snapshot_reset_p50_ms=${fmtMs(snap.p50)} speedup=${Number.isFinite(speedup) ? speedup.toFixed(2) : "n/a"}`);
    } finally {
      await driver.close();
      await sim.stop();
      await adb.stop();
    }
  },
};
