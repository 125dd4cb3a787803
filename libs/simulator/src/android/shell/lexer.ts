/**
 * Tokeniser for the simulated device's `sh` (the part of mksh that scripts sent over adb use).
 *
 * Quote removal happens here, but each word keeps its parts with their quoting, because quoting
 * decides what the interpreter later expands: single quotes are literal, double quotes honour `\`
 * before `$`, `` ` ``, `"`, `\` and newline, an unquoted `\` escapes the next character, and adjacent
 * parts join into one word (`'"{"' '"\"a\":1"'` style task arguments rely on it).
 *
 * Expansion is limited to what cannot run anything: parameters (`$NAME`, `${NAME}`, `$?`, `$#`, `$$`,
 * `$0`…`$9`) unquoted or inside double quotes, and pathname patterns (`*`, `?`, `[…]`) in unquoted
 * text. Command substitution (`$(…)`, backticks) and arithmetic (`$((…))`) are kept as literal text
 * and are never executed.
 */
import { ShellSyntaxError } from "@farm/shell-words";

export type Operator = ";" | "&&" | "||" | "|" | "&";
export type RedirOp = ">" | ">>" | "<" | ">&" | "<&";

/** One piece of a word: literal text, or a parameter to expand. `quoted`: inside quotes or escaped (no globbing, no field splitting). */
export type WordPart = { kind: "lit"; text: string; quoted: boolean } | { kind: "param"; name: string; quoted: boolean };

export interface Word {
  /** The word after quote removal, parameters left as written (`$X`): what reserved words and plain uses compare. */
  text: string;
  /** Some part of it was quoted or escaped (a quoted `if` is not a reserved word). */
  quoted: boolean;
  parts: WordPart[];
}

export type Token = ({ kind: "word" } & Word) | { kind: "op"; op: Operator } | { kind: "redir"; fd: number | undefined; op: RedirOp };

export { ShellSyntaxError };

const DQ_ESCAPABLE = new Set(["$", "`", '"', "\\", "\n"]);
const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_]/;
const SPECIAL_PARAMS = new Set(["?", "#", "$", "!", "@", "*", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]);

/** Reads a parameter reference at `line[i] === "$"`; undefined when what follows is not one (the `$` is then literal). */
function readParam(line: string, i: number): { name: string; end: number } | undefined {
  const c = line[i + 1];
  if (c === undefined) return undefined;
  if (SPECIAL_PARAMS.has(c)) return { name: c, end: i + 2 };
  if (NAME_START.test(c)) {
    let j = i + 1;
    while (j < line.length && NAME_CHAR.test(line[j]!)) j++;
    return { name: line.slice(i + 1, j), end: j };
  }
  if (c === "{") {
    const close = line.indexOf("}", i + 2);
    if (close < 0) return undefined;
    const name = line.slice(i + 2, close);
    if (/^([A-Za-z_][A-Za-z0-9_]*|[?#$!@*0-9])$/.test(name)) return { name, end: close + 1 };
  }
  return undefined;
}

/**
 * The words and operators of one line as they are read. A class, not closures in tokenize: tsx compiles with
 * esbuild's keepNames, which defines a name on each named closure as it is made, and every shell line is tokenized.
 */
class TokenSink {
  readonly tokens: Token[] = [];
  private parts: WordPart[] = [];
  private inWord = false;
  private anyQuoted = false;

  get wordStarted(): boolean {
    return this.inWord;
  }

  addLit(text: string, quoted: boolean): void {
    this.inWord = true;
    if (quoted) this.anyQuoted = true;
    const last = this.parts[this.parts.length - 1];
    if (last?.kind === "lit" && last.quoted === quoted) last.text += text;
    else this.parts.push({ kind: "lit", text, quoted });
  }

  addParam(name: string, quoted: boolean): void {
    this.inWord = true;
    if (quoted) this.anyQuoted = true;
    this.parts.push({ kind: "param", name, quoted });
  }

  endWord(): void {
    if (this.inWord) {
      const text = this.parts.map((p) => (p.kind === "lit" ? p.text : `$${p.name.length > 1 ? `{${p.name}}` : p.name}`)).join("");
      this.tokens.push({ kind: "word", text, quoted: this.anyQuoted, parts: this.parts });
    }
    this.dropWord();
  }

  /** Forgets the word so far (it was a redirection's file descriptor). */
  dropWord(): void {
    this.parts = [];
    this.inWord = false;
    this.anyQuoted = false;
  }

  /** The word so far is unquoted literal digits only (`2` of `2>/dev/null`). */
  pendingFd(): number | undefined {
    if (!this.inWord || this.anyQuoted || this.parts.length !== 1) return undefined;
    const p = this.parts[0]!;
    return p.kind === "lit" && /^[0-9]+$/.test(p.text) ? Number(p.text) : undefined;
  }
}

export function tokenize(line: string): Token[] {
  const w = new TokenSink();
  const tokens = w.tokens;
  let i = 0;
  const n = line.length;
  while (i < n) {
    const c = line[i]!;
    if (c === " " || c === "\t" || c === "\r") {
      w.endWord();
      i++;
    } else if (c === "\n" || c === ";") {
      w.endWord();
      tokens.push({ kind: "op", op: ";" });
      i++;
    } else if (c === "&" || c === "|") {
      w.endWord();
      if (line[i + 1] === c) {
        tokens.push({ kind: "op", op: c === "&" ? "&&" : "||" });
        i += 2;
      } else {
        tokens.push({ kind: "op", op: c });
        i++;
      }
    } else if (c === ">" || c === "<") {
      // A word made only of digits right before the operator is the file descriptor (`2>/dev/null`).
      const fd = w.pendingFd();
      if (fd !== undefined) {
        w.dropWord();
      } else {
        w.endWord();
      }
      const next = line[i + 1];
      let op: RedirOp;
      if (c === ">" && next === ">") op = ">>";
      else if (next === "&") op = c === ">" ? ">&" : "<&";
      else op = c;
      tokens.push({ kind: "redir", fd, op });
      i += op.length;
    } else if (c === "#" && !w.wordStarted) {
      const nl = line.indexOf("\n", i);
      i = nl < 0 ? n : nl;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new ShellSyntaxError("unterminated single quote");
      w.addLit(line.slice(i + 1, end), true);
      i = end + 1;
    } else if (c === '"') {
      i++;
      w.addLit("", true); // `""` is a word of its own, even when empty
      for (;;) {
        if (i >= n) throw new ShellSyntaxError("unterminated double quote");
        const d = line[i]!;
        if (d === '"') break;
        if (d === "\\" && i + 1 < n && DQ_ESCAPABLE.has(line[i + 1]!)) {
          if (line[i + 1] !== "\n") w.addLit(line[i + 1]!, true);
          i += 2;
        } else if (d === "$" && readParam(line, i)) {
          const p = readParam(line, i)!;
          w.addParam(p.name, true);
          i = p.end;
        } else {
          w.addLit(d, true);
          i++;
        }
      }
      i++;
    } else if (c === "\\") {
      if (i + 1 < n) {
        if (line[i + 1] !== "\n") w.addLit(line[i + 1]!, true);
        i += 2;
      } else {
        i++;
      }
    } else if (c === "$" && readParam(line, i)) {
      const p = readParam(line, i)!;
      w.addParam(p.name, false);
      i = p.end;
    } else {
      w.addLit(c, false);
      i++;
    }
  }
  w.endWord();
  return tokens;
}
