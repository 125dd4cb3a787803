/**
 * `farm bench reset [--episodes N] [--profile emulator-adb] [--transport grpc|adb]`: how long an episode's reset
 * takes by the task's reset steps alone vs a snapshot load + the reset steps (`resetFromSnapshot`), on one
 * simulated emulator (in a child process, with the profile's latencies: `emulator-adb` gives adb commands and
 * snapshot loads a real emulator's delays), Classic 2048, alternating, measured in one run.
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
      const s = await DeviceSession.open({ device: driver.device(sim.serials[0]!), task, config: { settleMs: 100, apkDirs: [path.join(REPO, "tasks/apks")] } });
      if (s.state !== "ready") throw new Error(`device could not be set up: ${s.unusableReason}`);
      const stepsMs: number[] = [];
      const snapMs: number[] = [];
      const kinds: Record<string, number> = {};
      let i = 0;
      const one = async (fromSnapshot: boolean) => {
        const t = await s.runEpisode({ seed: i, index: i, policy: randomPolicy({ seed: i }), resetFromSnapshot: fromSnapshot, limits: { maxEpisodeSteps: 2 } });
        i++;
        if (t.cause === "reset_failed") throw new Error(`reset failed: ${t.causeDetail}`);
        kinds[t.resetKind ?? "?"] = (kinds[t.resetKind ?? "?"] ?? 0) + 1;
        return t;
      };
      // The first snapshot episode right after setup saves the snapshot (its own reset is by steps).
      await one(true);
      for (let k = 0; k < episodes; k++) {
        const a = await one(true);
        if (a.resetKind === "snapshot") snapMs.push(a.resetMs!);
        const b = await one(false);
        stepsMs.push(b.resetMs!);
      }
      await s.close();
      const steps = quantiles(stepsMs);
      const snap = quantiles(snapMs);
      console.log(`reset: Classic 2048 on one simulated emulator (profile ${profile}, snapshots over ${transport === "grpc" ? "gRPC SnapshotService" : "the console (adb emu)"}), ${episodes} episodes each, alternating; resets: ${JSON.stringify(kinds)}`);
      for (const line of latencyTable("reset", 34, [
        { name: "reset steps", q: steps },
        { name: "snapshot load + reset steps", q: snap },
      ])) console.log(line);
      const speedup = steps.p50 / snap.p50;
      console.log(`steps_reset_p50_ms=${fmtMs(steps.p50)} snapshot_reset_p50_ms=${fmtMs(snap.p50)} speedup=${Number.isFinite(speedup) ? speedup.toFixed(2) : "n/a"}`);
    } finally {
      await driver.close();
      await sim.stop();
      await adb.stop();
    }
  },
};
