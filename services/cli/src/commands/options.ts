/** Option parsing shared by the subcommands: strict numbers with bounds, and values shown safely in messages. */
import { intInRange } from "@farm/config";
import { terminalSafe } from "@farm/terminal-text";
import { isResetMode, RESET_MODES, type ResetMode } from "@farm/task/reset-modes";

/** Commander's accumulator for a repeatable option: `--x a --x b` → ["a", "b"]. */
export const collect = (v: string, prev: string[]) => [...prev, v];

/** One day: no duration option may exceed what setTimeout can hold (24.8 days), nor be absurd. */
export const MAX_DURATION_MS = 86_400_000;

/** Upper bounds by option name (a name not listed is bounded by the largest safe integer). */
function defaultMax(name: string): number {
  if (name.endsWith("-ms")) return MAX_DURATION_MS;
  if (name.endsWith("port")) return 65_535;
  const table: Record<string, number> = {
    __proto__: null as never,
    episodes: 1_000_000,
    devices: 256,
    emulators: 256,
    priority: 1000,
    "max-steps": 10_000_000,
    "frame-every": 1_000_000,
    window: 1_000_000,
  };
  return table[name] ?? Number.MAX_SAFE_INTEGER;
}

/** A user-supplied value for an error message: cut short, control characters escaped (never raw to a terminal). */
export function shown(v: string): string {
  return terminalSafe(v.length > 40 ? `${v.slice(0, 40)}…` : v);
}

/**
 * An integer option in [min, max] (max by default from the option's name), or undefined when absent. Only plain
 * decimal digits with an optional sign: "", " 1", "1e3", "0x10", "NaN", "Infinity" are errors naming the flag.
 */
export function parseIntOption(name: string, v: string | undefined, min = 0, max = defaultMax(name)): number | undefined {
  if (v === undefined) return undefined;
  const n = intInRange(v, min, max);
  if (n === undefined) throw new Error(`--${name} must be an integer in ${min}..${max}, got '${shown(v)}'`);
  return n;
}

/** A decimal number option in (0, max] (seconds and the like), or undefined when absent. */
export function parsePositiveNumberOption(name: string, v: string | undefined, max: number): number | undefined {
  if (v === undefined) return undefined;
  const n = /^\+?(?:\d{1,12}(?:\.\d{0,9})?|\.\d{1,9})$/.test(v) ? Number(v) : NaN;
  if (!Number.isFinite(n) || n <= 0 || n > max) throw new Error(`--${name} must be a number in (0, ${max}], got '${shown(v)}'`);
  return n;
}

/** `--reset steps|setup-snapshot|start-snapshot`, or undefined when absent. */
export function parseResetModeOption(v: string | undefined): ResetMode | undefined {
  if (v === undefined) return undefined;
  if (!isResetMode(v)) throw new Error(`--reset must be one of ${RESET_MODES.join(", ")}, got '${shown(v)}'`);
  return v;
}
