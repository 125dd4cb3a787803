/** Reading the benchmarks' command-line options (`--devices 8` arrives as { devices: "8" }). */
import { intInRange } from "@farm/config";
import type { LatencyProfile } from "@farm/simulator";
import { terminalSafe } from "@farm/terminal-text";
import type { BenchOptions } from "./scenario.ts";

/** An integer option in min (default 1) .. max, or `dflt` when absent; anything else is an error naming the option. */
export function intOpt(opts: BenchOptions, name: string, dflt: number, min = 1, max?: number): number {
  const v = opts[name];
  if (v === undefined || v === true) return dflt;
  const n = intInRange(String(v), min, max ?? Number.MAX_SAFE_INTEGER);
  const range = max !== undefined ? `an integer in ${min}..${max}` : min === 1 ? "a positive integer" : `an integer >= ${min}`;
  if (n === undefined) throw new Error(`--${name} must be ${range}, got ${terminalSafe(String(v))}`);
  return n;
}

const PROFILES: readonly LatencyProfile[] = ["instant", "emulator-adb", "emulator-grpc"];

/** --profile: the simulator's latency profile (default instant); anything else is an error. */
export function profileOpt(opts: BenchOptions): LatencyProfile {
  const profile = typeof opts.profile === "string" ? opts.profile : "instant";
  if (!(PROFILES as readonly string[]).includes(profile)) throw new Error(`--profile must be instant, emulator-adb or emulator-grpc, got ${profile}`);
  return profile as LatencyProfile;
}
