/**
 * How much a reader may allocate for one file, whatever the file declares. A container file states block
 * sizes, record counts, array/map entry counts and string lengths; each is checked against the bytes
 * actually present and this budget before anything is allocated, so a corrupt or hostile file ends in a
 * `corrupt_file` error instead of an out-of-memory crash or a minute of CPU.
 *
 * The budget is per file being read (default 256 MiB); the CLI takes it from FARM_TRAJECTORY_READ_BUDGET_MB.
 */
export interface ReadLimits {
  /** Largest block (compressed as stored, and again decompressed) a reader holds in memory. */
  memoryBudgetBytes: number;
  /** Largest file header (schema + metadata). */
  maxHeaderBytes: number;
  /** Most values a block may declare that take no bytes on the wire (nulls, empty records). */
  maxZeroSizeItems: number;
  /** Most arrays an extra's declared shape may make the reader build. */
  maxShapeNodes: number;
}

export const DEFAULT_READ_BUDGET_BYTES = 256 * 1024 * 1024;

export interface ReadLimitOptions {
  /** Default 256 MiB. */
  memoryBudgetBytes?: number;
}

export function resolveReadLimits(opts: ReadLimitOptions = {}): ReadLimits {
  const budget = opts.memoryBudgetBytes ?? DEFAULT_READ_BUDGET_BYTES;
  if (!Number.isSafeInteger(budget) || budget < 64 * 1024) throw new RangeError(`read memory budget must be an integer of at least 65536 bytes, got ${budget}`);
  return {
    memoryBudgetBytes: budget,
    maxHeaderBytes: Math.min(budget, 16 * 1024 * 1024),
    // A JS value costs at least ~8 bytes; keep zero-size items and shape arrays well inside the budget.
    maxZeroSizeItems: Math.floor(budget / 64),
    maxShapeNodes: Math.floor(budget / 64),
  };
}
