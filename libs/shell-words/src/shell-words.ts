/**
 * POSIX shell words, both ways: quoting a value so `sh` reads it back as exactly one argument, and quote
 * removal with word splitting (no expansions, no operators). The driver builds device command lines with it;
 * the simulator's shell throws the same ShellSyntaxError.
 */
import { FarmError } from "@farm/errors";

/** Characters that never need quoting in a POSIX shell word. */
const SAFE_WORD = /^[A-Za-z0-9_.,/:=@%+-]+$/;

/** One argument for the device shell: returned as is when plainly safe, else single-quoted (`'` → `'\''`). */
export function shQuote(value: string): string {
  if (SAFE_WORD.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Joins arguments into one command line, each quoted as one argument. */
export function shJoin(args: readonly string[]): string {
  return args.map(shQuote).join(" ");
}

/** An unterminated quote or a misplaced operator: the same input fails the same way (not retryable). */
export class ShellSyntaxError extends FarmError<"shell_syntax"> {
  override readonly name = "ShellSyntaxError";

  constructor(message: string) {
    super("shell_syntax", message);
  }
}

/**
 * POSIX shell quote removal and word splitting over `text`, and nothing else: single quotes, double
 * quotes (where `\` escapes only `$`, `` ` ``, `"`, `\` and newline), unquoted backslash escapes,
 * adjacent-part concatenation and splitting on unquoted blanks. No parameter, command or glob
 * expansion; `;`, `|`, `&`, `<`, `>`, `$(…)`, backticks and `#` are ordinary characters.
 * Throws ShellSyntaxError on an unterminated quote.
 */
export function shSplit(text: string): string[] {
  const words: string[] = [];
  let cur = "";
  let inWord = false;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === " " || c === "\t" || c === "\n") {
      if (inWord) {
        words.push(cur);
        cur = "";
        inWord = false;
      }
      i++;
      continue;
    }
    inWord = true;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new ShellSyntaxError(`unterminated single quote at offset ${i} in ${JSON.stringify(text)}`);
      cur += text.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      i++;
      let closed = false;
      while (i < n) {
        const d = text[i]!;
        if (d === '"') {
          closed = true;
          i++;
          break;
        }
        if (d === "\\" && i + 1 < n) {
          const e = text[i + 1]!;
          if (e === "$" || e === "`" || e === '"' || e === "\\") {
            cur += e;
            i += 2;
            continue;
          }
          if (e === "\n") {
            i += 2;
            continue;
          }
        }
        cur += d;
        i++;
      }
      if (!closed) throw new ShellSyntaxError(`unterminated double quote in ${JSON.stringify(text)}`);
    } else if (c === "\\") {
      if (i + 1 < n) {
        const e = text[i + 1]!;
        if (e !== "\n") cur += e;
        i += 2;
      } else {
        cur += "\\";
        i++;
      }
    } else {
      cur += c;
      i++;
    }
  }
  if (inWord) words.push(cur);
  return words;
}
