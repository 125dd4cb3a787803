/**
 * A parser for the Python literals apps log as extra values (`ast.literal_eval` subset, task-format.md §6.4):
 * ints, floats, strings (single/double quoted, escapes, adjacent strings concatenate), True/False/None,
 * lists and tuples (both become arrays), dicts (string/number keys) and sets (become arrays); nested; unary
 * +/- on numbers. Anything else is a parse error, reported as a result, never thrown.
 */
import { FarmError } from "@farm/errors";

export type PyValue = number | string | boolean | null | PyValue[] | { [key: string]: PyValue };

export type PyParseResult = { ok: true; value: PyValue } | { ok: false; error: string };

class PyParseError extends FarmError<"invalid_literal"> {
  /** the same input fails the same way (not retryable). */
  constructor(message: string) {
    super("invalid_literal", message);
  }
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"', a: "\x07", b: "\b", f: "\f", v: "\v", "0": "\0", "\n": "" };

/** Nesting of lists/tuples/dicts/sets: deeper values are refused (the parser recurses once per level). */
const MAX_DEPTH = 32;

class Parser {
  private i = 0;
  private depth = 0;
  constructor(private readonly s: string) {}

  parseAll(): PyValue {
    const v = this.value();
    this.ws();
    if (this.i < this.s.length) this.fail(`unexpected '${this.s[this.i]}'`);
    return v;
  }

  private fail(msg: string): never {
    throw new PyParseError(`${msg} at ${this.i}`);
  }

  private ws(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i]!)) this.i++;
  }

  private peek(): string {
    this.ws();
    return this.s[this.i] ?? "";
  }

  private value(): PyValue {
    const c = this.peek();
    if (c === "[" || c === "(" || c === "{") {
      if (++this.depth > MAX_DEPTH) this.fail(`nested deeper than ${MAX_DEPTH} levels`);
      const v = c === "[" ? this.seq("[", "]") : c === "(" ? this.tuple() : this.dictOrSet();
      this.depth--;
      return v;
    }
    if (c === "'" || c === '"') return this.strings();
    if (/[-+0-9.]/.test(c)) return this.number();
    const m = /^(True|False|None)\b/.exec(this.s.slice(this.i));
    if (m) {
      this.i += m[0].length;
      return m[1] === "True" ? true : m[1] === "False" ? false : null;
    }
    return this.fail(c === "" ? "unexpected end" : `unexpected '${c}'`);
  }

  /** Items up to `close`, after the opening bracket and any items already read (`out`). */
  private seq(open: string, close: string, out: PyValue[] = [], opened = false): PyValue[] {
    if (!opened) this.i++; // open
    for (;;) {
      if (this.peek() === close) {
        this.i++;
        return out;
      }
      out.push(this.value());
      const c = this.peek();
      if (c === ",") this.i++;
      else if (c !== close) this.fail(`expected ',' or '${close}' after ${open}…`);
    }
  }

  /** `(x)` is x; `()`, `(x,)` and `(x, y…)` are tuples. Each item is parsed once (no re-parsing: linear time). */
  private tuple(): PyValue {
    this.i++;
    if (this.peek() === ")") {
      this.i++;
      return [];
    }
    const first = this.value();
    const c = this.peek();
    if (c === ")") {
      this.i++;
      return first; // parenthesised expression, not a tuple
    }
    if (c !== ",") this.fail("expected ',' or ')' after (…");
    this.i++;
    return this.seq("(", ")", [first], true);
  }

  private dictOrSet(): PyValue {
    this.i++;
    if (this.peek() === "}") {
      this.i++;
      return Object.create(null) as { [key: string]: PyValue };
    }
    const firstKey = this.value();
    if (this.peek() !== ":") {
      const out: PyValue[] = [firstKey];
      for (;;) {
        const c = this.peek();
        if (c === "}") {
          this.i++;
          return out;
        }
        if (c !== ",") this.fail("expected ',' or '}' in set");
        this.i++;
        if (this.peek() === "}") continue;
        out.push(this.value());
      }
    }
    // Null prototype: a key such as "__proto__" or "constructor" is an ordinary key.
    const obj: { [key: string]: PyValue } = Object.create(null);
    let key: PyValue = firstKey;
    for (;;) {
      if (typeof key !== "string" && typeof key !== "number" && typeof key !== "boolean" && key !== null) this.fail("unhashable dict key");
      if (this.peek() !== ":") this.fail("expected ':' in dict");
      this.i++;
      obj[String(key)] = this.value();
      const c = this.peek();
      if (c === "}") {
        this.i++;
        return obj;
      }
      if (c !== ",") this.fail("expected ',' or '}' in dict");
      this.i++;
      if (this.peek() === "}") {
        this.i++;
        return obj;
      }
      key = this.value();
    }
  }

  private strings(): string {
    let out = "";
    while (this.peek() === "'" || this.peek() === '"') out += this.string();
    return out;
  }

  private string(): string {
    const q = this.s[this.i]!;
    this.i++;
    let out = "";
    for (;;) {
      const c = this.s[this.i];
      if (c === undefined || c === "\n") this.fail("unterminated string");
      this.i++;
      if (c === q) return out;
      if (c !== "\\") {
        out += c;
        continue;
      }
      const e = this.s[this.i];
      if (e === undefined) this.fail("unterminated string");
      this.i++;
      if (Object.hasOwn(ESCAPES, e)) out += ESCAPES[e];
      else if (e === "x" || e === "u" || e === "U") {
        const n = e === "x" ? 2 : e === "u" ? 4 : 8;
        const hex = this.s.slice(this.i, this.i + n);
        if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) this.fail(`bad \\${e} escape`);
        this.i += n;
        out += String.fromCodePoint(parseInt(hex, 16));
      } else out += "\\" + e; // Python keeps unknown escapes verbatim
    }
  }

  private number(): number {
    let sign = 1;
    for (;;) {
      const c = this.peek();
      if (c === "-") sign = -sign;
      else if (c !== "+") break;
      this.i++;
    }
    const rest = this.s.slice(this.i);
    const m =
      /^0[xX][0-9a-fA-F_]+|^0[oO][0-7_]+|^0[bB][01_]+/.exec(rest) ??
      /^(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?/.exec(rest);
    if (!m) {
      const inf = /^(inf|nan)\b/.exec(rest); // not literals in Python either
      return this.fail(inf ? `'${inf[1]}' is not a literal` : "expected a number");
    }
    this.i += m[0].length;
    const t = m[0].replace(/_/g, "");
    let v: number;
    if (/^0[xX]/.test(t)) v = parseInt(t.slice(2), 16);
    else if (/^0[oO]/.test(t)) v = parseInt(t.slice(2), 8);
    else if (/^0[bB]/.test(t)) v = parseInt(t.slice(2), 2);
    else v = Number(t);
    if (!Number.isFinite(v)) this.fail(`number '${m[0].length > 40 ? `${m[0].slice(0, 40)}…` : m[0]}' is not finite as a float`);
    if (/[jJ]/.test(this.s[this.i] ?? "")) this.fail("complex numbers are not supported");
    return sign * v;
  }
}

/** Parses one extra value. An empty (or blank) text is the flag value 1, as the farm's convention says. */
export function parsePyLiteral(text: string): PyParseResult {
  if (text.trim() === "") return { ok: true, value: 1 };
  try {
    return { ok: true, value: new Parser(text).parseAll() };
  } catch (e) {
    if (e instanceof PyParseError) return { ok: false, error: e.message };
    return { ok: false, error: String(e) };
  }
}

/** Parses a float the way Python's float() does for the strings the canonical regexes capture. */
export function parsePyFloat(text: string): number | undefined {
  const t = text.trim();
  if (/^[-+]?(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?$/.test(t)) return Number(t.replace(/_/g, ""));
  const m = /^([-+]?)(inf|infinity|nan)$/i.exec(t);
  if (m) return m[2]!.toLowerCase() === "nan" ? NaN : m[1] === "-" ? -Infinity : Infinity;
  return undefined;
}
