/**
 * Text from files (ids, causes, file names, error messages) printed to a terminal must not carry control
 * sequences: an ESC or CSI in an episode id could rewrite the screen, a bidi override could make a line
 * read differently from what it is. These escape them visibly.
 */

/** C0 controls, DEL, C1 controls, bidi embeddings/overrides/isolates and marks, line/paragraph separators. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

const hex = (c: string, width: number) => c.charCodeAt(0).toString(16).toUpperCase().padStart(width, "0");

/** For plain text output: each unsafe character becomes `\xNN` or `\uNNNN`. */
export function escapeControl(text: string): string {
  return text.replace(UNSAFE, (c) => (c.charCodeAt(0) <= 0xff ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`));
}

/** What JSON.stringify leaves raw inside strings: DEL, C1, bidi and separators (C0 it escapes itself; newlines between tokens are layout). */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/** For JSON output: those characters as `\uNNNN` (still the same JSON). */
export function terminalSafeJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (c) => `\\u${hex(c, 4)}`);
}
