/** Bounds on what a check reads and records (FAMILIES.md "Checks"): every check is timed and bounded, whatever its definition says. */
export interface ScoreLimits {
  /** A check's deadline when its definition gives none (`timeout_sec`). */
  defaultTimeoutMs: number;
  /** Bytes read from a file, a command's output or a query's value. */
  maxReadBytes: number;
  /** Bytes of a database (with its -wal / -journal) pulled for a `sql` check. */
  maxDbBytes: number;
  /** Characters of an observed value recorded in the trajectory (cut with "…"). */
  maxObservedChars: number;
  /** SQLite's heap for one query (`PRAGMA hard_heap_limit`): a query that needs more fails as out of memory. */
  sqlHeapBytes: number;
}

export const DEFAULT_SCORE_LIMITS: ScoreLimits = {
  defaultTimeoutMs: 30_000,
  maxReadBytes: 1024 * 1024,
  maxDbBytes: 64 * 1024 * 1024,
  maxObservedChars: 1024,
  sqlHeapBytes: 256 * 1024 * 1024,
};

/** `s` cut to `max` characters, with "…" at the end when it was cut. */
export function cut(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, Math.max(0, max - 1))}…`;
}
