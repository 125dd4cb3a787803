/** Option parsing shared by the subcommands. */

/** Commander's accumulator for a repeatable option: `--x a --x b` → ["a", "b"]. */
export const collect = (v: string, prev: string[]) => [...prev, v];

/** An integer option in [min, max], or undefined when absent; anything else is an error naming the flag. */
export function parseIntOption(name: string, v: string | undefined, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer ≥ ${min}${max < Number.MAX_SAFE_INTEGER ? ` and ≤ ${max}` : ""}, got '${v}'`);
  return n;
}
