/** Statistics the benchmarks share: quantiles of latency samples and the table that prints them, a process's CPU. */
import { readFileSync } from "node:fs";

/** Count and quantiles of a sample set, in the samples' unit; NaN when there are no samples. */
export interface Quantiles {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** The p-quantile (nearest rank, rounded down) of samples sorted ascending; NaN when empty. */
export function quantile(sorted: readonly number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! : NaN;
}

/** n, p50, p90, p99 and max of samples in any order. */
export function quantiles(samples: readonly number[]): Quantiles {
  const s = [...samples].sort((a, b) => a - b);
  return { n: s.length, p50: quantile(s, 0.5), p90: quantile(s, 0.9), p99: quantile(s, 0.99), max: s.length ? s[s.length - 1]! : NaN };
}

/** Milliseconds with 3 decimals, or `n/a` for NaN/infinite. */
export const fmtMs = (v: number): string => (Number.isFinite(v) ? v.toFixed(3) : "n/a");

export interface LatencyRow {
  name: string;
  q: Quantiles;
  /** Failed samples (not in q); the table has an `err` column when any row has it. */
  errors?: number;
}

/**
 * A fixed-width table of latency rows in ms: the title heads the name column (`nameWidth` wide), then
 * n, err (when given), p50, p90, p99, max. Returns the lines, header first.
 */
export function latencyTable(title: string, nameWidth: number, rows: readonly LatencyRow[]): string[] {
  const withErrors = rows.some((r) => r.errors !== undefined);
  const line = (name: string, n: string, err: string, cells: string[]) =>
    [name.padEnd(nameWidth), n.padStart(6), ...(withErrors ? [err.padStart(4)] : []), ...cells.map((c) => c.padStart(9))].join(" ");
  return [
    line(title, "n", "err", ["p50 ms", "p90 ms", "p99 ms", "max ms"]),
    ...rows.map((r) => line(r.name, String(r.q.n), String(r.errors ?? 0), [r.q.p50, r.q.p90, r.q.p99, r.q.max].map(fmtMs))),
  ];
}

/** utime and stime (s) of a /proc stat file. */
function statTimes(file: string): { user: number; sys: number } {
  try {
    const stat = readFileSync(file, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { user: Number(fields[11]) / 100, sys: Number(fields[12]) / 100 }; // in USER_HZ (100 on Linux)
  } catch {
    return { user: NaN, sys: NaN };
  }
}

/**
 * CPU seconds of a process in user space and in the kernel, and of its main thread (a Node process's event
 * loop: what its latency depends on), from /proc (Linux); NaN elsewhere.
 */
export function procCpuSplit(pid: number | undefined): { user: number; sys: number; mainThread: number } {
  if (!pid) return { user: NaN, sys: NaN, mainThread: NaN };
  const main = statTimes(`/proc/${pid}/task/${pid}/stat`);
  return { ...statTimes(`/proc/${pid}/stat`), mainThread: main.user + main.sys };
}

/** CPU seconds (user + system) of a process, from /proc (Linux); NaN elsewhere. */
export function procCpuSec(pid: number | undefined): number {
  const { user, sys } = procCpuSplit(pid);
  return user + sys;
}
