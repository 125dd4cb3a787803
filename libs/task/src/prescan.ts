/**
 * Checks of the whole text before anything parses it: size, emptiness, characters no task file may hold anywhere
 * (NUL, bidi overrides — comments included: they hide code from readers) and nesting depth, so the recursive
 * parsers after it (protobufjs, the line index) never see input that could exhaust their stack.
 */
import { TaskLoadError } from "./errors.ts";
import type { Token } from "./lexer.ts";
import { ALWAYS_FORBIDDEN, TASK_LIMITS } from "./limits.ts";

export function prescanText(file: string, text: string): void {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > TASK_LIMITS.maxFileBytes)
    throw new TaskLoadError("too_large", file, 1, "", `task file of ${bytes} bytes is larger than the ${TASK_LIMITS.maxFileBytes} allowed`, "install big APKs from a file (install_apk { filesystem { path } }) instead of an inline blob");
  const bad = ALWAYS_FORBIDDEN.exec(text);
  if (bad) {
    const line = lineAt(text, bad.index);
    const what = bad[0] === "\u0000" ? "a NUL character (is this a binary file?)" : `a bidirectional control character U+${bad[0].charCodeAt(0).toString(16).toUpperCase()}`;
    throw new TaskLoadError("bad_text", file, line, "", `the file contains ${what}`, "task files are plain UTF-8 text; remove it");
  }
}

/** After tokenizing: refuses a file with no fields and nesting deeper than the limit. */
export function checkTokens(file: string, tokens: readonly Token[]): void {
  if (tokens.length === 0) throw new TaskLoadError("empty_file", file, 1, "", "the task file is empty (or only comments)", "write at least an id and the task's steps; see tasks/README.md");
  let depth = 0;
  for (const t of tokens) {
    if (t.kind !== "punct") continue;
    if (t.text === "{" || t.text === "<" || t.text === "[") {
      if (++depth > TASK_LIMITS.maxNestingDepth)
        throw new TaskLoadError("too_deep", file, t.line, "", `nesting deeper than ${TASK_LIMITS.maxNestingDepth} levels`, "task messages nest a few levels; check for unbalanced braces");
    } else if (t.text === "}" || t.text === ">" || t.text === "]") depth = Math.max(0, depth - 1);
  }
}

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}
