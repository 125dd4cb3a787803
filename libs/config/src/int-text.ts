/**
 * The one integer check for settings and options (environment variables, `farm` flags, benchmark options):
 * a number that is a safe integer, or text of an optional sign and 1..16 plain decimal digits. "", " 1",
 * "1e3", "0x10", "1.0", "NaN" and "Infinity" are not integers here, wherever they come from.
 */
const INT_TEXT = /^[+-]?\d{1,16}$/;

/** `value` as an integer in min..max (both inclusive), or undefined when it is not one. */
export function intInRange(value: string | number, min: number, max: number): number | undefined {
  const n = typeof value === "number" ? value : INT_TEXT.test(value) ? Number(value) : Number.NaN;
  return Number.isSafeInteger(n) && n >= min && n <= max ? n : undefined;
}
