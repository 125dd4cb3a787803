/**
 * The one character set: C0 controls (U+0000–001F), DEL (U+007F), C1 controls (U+0080–009F), the bidi
 * controls (ALM U+061C, LRM/RLM U+200E–200F, embeddings and overrides U+202A–202E, isolates U+2066–2069)
 * and the line and paragraph separators (U+2028–2029, line breaks to some terminals and JSON readers).
 */
const UNSAFE_CLASS = "\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029";
const UNSAFE = new RegExp(`[${UNSAFE_CLASS}]`, "g");
const UNSAFE_RUNS = new RegExp(`[${UNSAFE_CLASS}]+`, "g");

/** Lowercase hex like JSON's own `\u001b`; Latin-1 characters as `\xNN`, the rest as `\uNNNN`. */
function escape(c: string): string {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** Whether `c` (one UTF-16 code unit) is in the set. */
export function isTerminalUnsafe(c: string): boolean {
  return c.length === 1 && new RegExp(`^[${UNSAFE_CLASS}]$`).test(c);
}

/** For plain text output: each unsafe character becomes a visible `\xNN` or `\uNNNN`. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, escape);
}

/**
 * For JSON text: unsafe characters as `\uNNNN` (the same JSON once parsed). Raw tab, newline and carriage
 * return are left alone: JSON.stringify escapes every C0 character inside strings, so raw ones are layout.
 */
export function terminalSafeJson(json: string): string {
  return json.replace(UNSAFE, (c) => (c === "\n" || c === "\t" || c === "\r" ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));
}

/** For short excerpts: each run of unsafe characters becomes one space. */
export function blankUnsafe(text: string): string {
  return text.replace(UNSAFE_RUNS, " ");
}
