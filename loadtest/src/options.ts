/** Reading the benchmarks' command-line options (`--devices 8` arrives as { devices: "8" }). */
import type { BenchOptions } from "./scenarios.ts";

/** An integer option >= min (default 1), or `dflt` when absent; anything else is an error naming the option. */
export function intOpt(opts: BenchOptions, name: string, dflt: number, min = 1): number {
  const v = opts[name];
  if (v === undefined || v === true) return dflt;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} must be ${min === 1 ? "a positive integer" : `an integer >= ${min}`}, got ${String(v)}`);
  return n;
}
