/**
 * Tokeniser for the simulated device's `sh` (a small POSIX subset).
 *
 * Quote removal happens here: single quotes are literal, double quotes honour `\` before `$`, `` ` ``,
 * `"`, `\` and newline, an unquoted `\` escapes the next character, and adjacent parts join into one
 * word (`'"{"' '"\"a\":1"'` style task arguments rely on it).
 *
 * Safe by construction: there is no parameter, command or arithmetic expansion anywhere in this
 * shell. `$(...)`, `${X}` and backticks are kept as literal text and are never executed.
 */
import { ShellSyntaxError } from "@farm/shell-words";

export type Operator = ";" | "&&" | "||" | "|" | "&";
export type RedirOp = ">" | ">>" | "<" | ">&" | "<&";

export type Token =
  | { kind: "word"; text: string; quoted: boolean }
  | { kind: "op"; op: Operator }
  | { kind: "redir"; fd: number | undefined; op: RedirOp };

export { ShellSyntaxError };

const DQ_ESCAPABLE = new Set(["$", "`", '"', "\\", "\n"]);

export function tokenize(line: string): Token[] {
  const tokens: Token[] = [];
  let cur = "";
  let inWord = false;
  let quoted = false;
  const endWord = (): void => {
    if (inWord) tokens.push({ kind: "word", text: cur, quoted });
    cur = "";
    inWord = false;
    quoted = false;
  };
  let i = 0;
  const n = line.length;
  while (i < n) {
    const c = line[i]!;
    if (c === " " || c === "\t" || c === "\r") {
      endWord();
      i++;
    } else if (c === "\n" || c === ";") {
      endWord();
      tokens.push({ kind: "op", op: ";" });
      i++;
    } else if (c === "&" || c === "|") {
      endWord();
      if (line[i + 1] === c) {
        tokens.push({ kind: "op", op: c === "&" ? "&&" : "||" });
        i += 2;
      } else {
        tokens.push({ kind: "op", op: c });
        i++;
      }
    } else if (c === ">" || c === "<") {
      // A word made only of digits right before the operator is the file descriptor (`2>/dev/null`).
      let fd: number | undefined;
      if (inWord && !quoted && /^[0-9]+$/.test(cur)) {
        fd = Number(cur);
        cur = "";
        inWord = false;
      } else {
        endWord();
      }
      const next = line[i + 1];
      let op: RedirOp;
      if (c === ">" && next === ">") op = ">>";
      else if (next === "&") op = c === ">" ? ">&" : "<&";
      else op = c;
      tokens.push({ kind: "redir", fd, op });
      i += op.length;
    } else if (c === "#" && !inWord) {
      const nl = line.indexOf("\n", i);
      i = nl < 0 ? n : nl;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new ShellSyntaxError("unterminated single quote");
      cur += line.slice(i + 1, end);
      inWord = true;
      quoted = true;
      i = end + 1;
    } else if (c === '"') {
      i++;
      for (;;) {
        if (i >= n) throw new ShellSyntaxError("unterminated double quote");
        const d = line[i]!;
        if (d === '"') break;
        if (d === "\\" && i + 1 < n && DQ_ESCAPABLE.has(line[i + 1]!)) {
          if (line[i + 1] !== "\n") cur += line[i + 1];
          i += 2;
        } else {
          cur += d;
          i++;
        }
      }
      i++;
      inWord = true;
      quoted = true;
    } else if (c === "\\") {
      if (i + 1 < n) {
        if (line[i + 1] !== "\n") {
          cur += line[i + 1];
          inWord = true;
          quoted = true;
        }
        i += 2;
      } else {
        i++;
      }
    } else {
      cur += c;
      inWord = true;
      i++;
    }
  }
  endWord();
  return tokens;
}
