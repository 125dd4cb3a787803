/**
 * Python `re` syntax (no flags, no verbose mode) → a small AST for the linear-time engine. Python's own errors are
 * reproduced; constructs that need backtracking (backreferences, lookaround, conditionals, atomic groups,
 * possessive quantifiers) are refused with an error naming the construct, as RE2 refuses them.
 */
import { CharSet, type ClassEscape } from "./charset.ts";
import { FarmError } from "@farm/errors";

export type AssertKind = "start" | "end_python" | "end_text" | "word_boundary" | "not_word_boundary";

export type Node =
  | { t: "empty" }
  | { t: "char"; set: CharSet }
  | { t: "cat"; items: Node[] }
  | { t: "alt"; items: Node[] }
  | { t: "group"; index: number; body: Node }
  | { t: "repeat"; body: Node; min: number; max: number; greedy: boolean }
  | { t: "assert"; kind: AssertKind };

export interface ParsedRegex {
  root: Node;
  /** Capturing groups (group 0, the whole match, not counted). */
  groupCount: number;
  /** Named group → number. */
  names: Map<string, number>;
}

export class RegexSyntaxError extends FarmError<"invalid_regex"> {
  /** the same input fails the same way (not retryable). */
  constructor(message: string) {
    super("invalid_regex", message);
  }
}

/** Counted repetitions above this are refused (RE2's limit too): each copy becomes engine states. */
export const MAX_REPEAT = 1000;

const CLASS_ESCAPES = new Set<string>(["d", "D", "s", "S", "w", "W"]);
const SIMPLE_ESCAPES: Record<string, number> = { __proto__: null, n: 10, t: 9, r: 13, f: 12, v: 11, a: 7 } as unknown as Record<string, number>;

export function parsePython(src: string): ParsedRegex {
  let i = 0;
  let groupCount = 0;
  const names = new Map<string, number>();
  /** Depth of open groups: nesting is bounded so the compiler's recursion is too. */
  let depth = 0;

  const fail = (what: string): never => {
    throw new RegexSyntaxError(`${what} at position ${i}`);
  };

  const alternation = (): Node => {
    const items: Node[] = [sequence()];
    while (src[i] === "|") {
      i++;
      items.push(sequence());
    }
    return items.length === 1 ? items[0]! : { t: "alt", items };
  };

  const sequence = (): Node => {
    const items: Node[] = [];
    while (i < src.length && src[i] !== "|" && src[i] !== ")") {
      const atomStart = i;
      const atom = parseAtom();
      if (atom === undefined) continue; // a comment group
      items.push(quantified(atom, atomStart));
    }
    return items.length === 0 ? { t: "empty" } : items.length === 1 ? items[0]! : { t: "cat", items };
  };

  /** Applies the quantifiers after an atom (Python allows one, plus a lazy `?`). */
  const quantified = (atom: Node, atomStart: number): Node => {
    const q = quantifier();
    if (!q) return atom;
    if (atom.t === "assert" || atom.t === "empty") fail("nothing to repeat");
    let greedy = true;
    if (src[i] === "?") {
      greedy = false;
      i++;
    } else if (src[i] === "+") {
      fail("possessive quantifier (a*+, a++) needs backtracking control and is not supported");
    }
    if (quantifierAhead()) fail("multiple repeat");
    void atomStart;
    return { t: "repeat", body: atom, min: q.min, max: q.max, greedy };
  };

  const quantifierAhead = (): boolean => {
    const c = src[i];
    if (c === "*" || c === "+" || c === "?") return true;
    return c === "{" && countedAt(i) !== undefined;
  };

  const countedAt = (at: number): { min: number; max: number; length: number } | undefined => {
    const m = /^\{(\d*)(?:(,)(\d*))?\}/.exec(src.slice(at, at + 24));
    if (!m || (m[1] === "" && m[2] === undefined)) return undefined;
    const min = m[1] === "" ? 0 : Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
    return { min, max, length: m[0].length };
  };

  const quantifier = (): { min: number; max: number } | undefined => {
    const c = src[i];
    if (c === "*") return i++, { min: 0, max: Infinity };
    if (c === "+") return i++, { min: 1, max: Infinity };
    if (c === "?") return i++, { min: 0, max: 1 };
    if (c !== "{") return undefined;
    const q = countedAt(i);
    if (!q) return undefined;
    if (q.max < q.min) fail("min repeat greater than max repeat");
    if (q.min > MAX_REPEAT || (q.max !== Infinity && q.max > MAX_REPEAT)) fail(`counted repetition above ${MAX_REPEAT} is not supported`);
    i += q.length;
    return { min: q.min, max: q.max };
  };

  const parseAtom = (): Node | undefined => {
    const ch = src[i]!;
    if (ch === "*" || ch === "+" || ch === "?") fail("nothing to repeat");
    if (ch === "{" && countedAt(i)) fail("nothing to repeat");
    if (ch === "(") return group();
    if (ch === "[") return charClass();
    if (ch === "\\") return escapeOutsideClass();
    i++;
    if (ch === ".") return { t: "char", set: CharSet.anyButNewline() };
    if (ch === "^") return { t: "assert", kind: "start" };
    if (ch === "$") return { t: "assert", kind: "end_python" };
    const cp = src.codePointAt(i - 1)!;
    if (cp > 0xffff) i++;
    return { t: "char", set: CharSet.of(cp) };
  };

  const group = (): Node | undefined => {
    const rest = src.slice(i, i + 4);
    if (!rest.startsWith("(?")) {
      i++;
      const index = ++groupCount;
      return { t: "group", index, body: groupBody() };
    }
    const tail = src.slice(i);
    let m: RegExpExecArray | null;
    if ((m = /^\(\?P<([^>]*)>/.exec(tail))) {
      const name = m[1]!;
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) fail(`bad group name '${name}'`);
      if (names.has(name)) fail(`redefinition of group name '${name}'`);
      i += m[0].length;
      const index = ++groupCount;
      names.set(name, index);
      return { t: "group", index, body: groupBody() };
    }
    if (tail.startsWith("(?P=")) fail("backreference (?P=name) is not supported (it cannot be matched in linear time)");
    if ((m = /^\(\?#[^)]*\)/.exec(tail))) {
      i += m[0].length;
      return undefined;
    }
    if (tail.startsWith("(?#")) fail("missing ), unterminated comment");
    if (tail.startsWith("(?:")) {
      i += 3;
      return groupBody();
    }
    if (tail.startsWith("(?=") || tail.startsWith("(?!")) fail("lookahead (?=...) / (?!...) is not supported (it cannot be matched in linear time)");
    if (tail.startsWith("(?<=") || tail.startsWith("(?<!")) fail("lookbehind (?<=...) / (?<!...) is not supported (it cannot be matched in linear time)");
    if (tail.startsWith("(?(")) fail("conditional group (?(...)...) is not supported");
    if (tail.startsWith("(?>")) fail("atomic group (?>...) is not supported");
    if (/^\(\?[aiLmsux-]/.test(tail)) fail("inline flags such as (?i) are not supported; write the pattern without flags, e.g. [Ss] for case");
    if (tail.startsWith("(?<")) fail("named groups are written (?P<name>...) in Python");
    return fail(`unknown extension (?${tail[2] ?? ""}`);
  };

  const groupBody = (): Node => {
    if (++depth > 100) fail("groups nested more than 100 deep");
    const body = alternation();
    if (src[i] !== ")") fail("missing ), unterminated subpattern");
    i++;
    depth--;
    return body;
  };

  const escapeOutsideClass = (): Node => {
    const c = src[i + 1];
    if (c === undefined) fail("bad escape (end of pattern)");
    if (c === "A") return (i += 2), { t: "assert", kind: "start" };
    if (c === "Z") return (i += 2), { t: "assert", kind: "end_text" };
    if (c === "b") return (i += 2), { t: "assert", kind: "word_boundary" };
    if (c === "B") return (i += 2), { t: "assert", kind: "not_word_boundary" };
    if (c! >= "1" && c! <= "9") {
      const three = src.slice(i + 1, i + 4);
      if (/^[0-7]{3}$/.test(three)) {
        i += 4;
        return { t: "char", set: CharSet.of(octal(three)) };
      }
      return fail(`backreference \\${/^\d{1,2}/.exec(src.slice(i + 1))![0]} is not supported (it cannot be matched in linear time)`);
    }
    return escape(false);
  };

  /** An escape valid outside and inside classes → a one-character set (or a class escape). */
  const escape = (inClass: boolean): { t: "char"; set: CharSet } => {
    const c = src[i + 1]!;
    if (CLASS_ESCAPES.has(c)) return (i += 2), { t: "char", set: CharSet.cls(c as ClassEscape) };
    return { t: "char", set: CharSet.of(escapedCodePoint(inClass)) };
  };

  /** The code point an escape stands for (not a class escape); advances past it. */
  const escapedCodePoint = (inClass: boolean): number => {
    const c = src[i + 1]!;
    if (c === "0" || (inClass && c >= "1" && c <= "7")) {
      const m = /^[0-7]{1,3}/.exec(src.slice(i + 1))!;
      i += 1 + m[0].length;
      return octal(m[0]);
    }
    const simple = SIMPLE_ESCAPES[c];
    if (simple !== undefined) return (i += 2), simple;
    if (inClass && c === "b") return (i += 2), 8;
    if (c === "x" || c === "u" || c === "U") {
      const len = c === "x" ? 2 : c === "u" ? 4 : 8;
      const hex = src.slice(i + 2, i + 2 + len);
      if (!new RegExp(`^[0-9A-Fa-f]{${len}}$`).test(hex)) fail(`incomplete escape \\${c}${hex}`);
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff) fail(`bad escape \\${c}${hex}`);
      i += 2 + len;
      return cp;
    }
    if (c === "N") fail("named character escapes \\N{...} are not supported");
    if (/[A-Za-z0-9]/.test(c)) fail(`bad escape \\${c}`);
    const cp = src.codePointAt(i + 1)!;
    i += cp > 0xffff ? 3 : 2;
    return cp;
  };

  const octal = (digits: string): number => {
    const v = parseInt(digits, 8);
    if (v > 0o377) fail(`octal escape value \\${digits} outside of range 0-0o377`);
    return v;
  };

  const charClass = (): Node => {
    const start = i;
    i++;
    let negated = false;
    if (src[i] === "^") {
      negated = true;
      i++;
    }
    const ranges: [number, number][] = [];
    const classes: ClassEscape[] = [];
    let first = true;
    for (;;) {
      const c = src[i];
      if (c === undefined) {
        i = start;
        fail("unterminated character set");
      }
      if (c === "]" && !first) {
        i++;
        return { t: "char", set: new CharSet(ranges, classes, negated) };
      }
      first = false;
      const lo = classItem();
      if (typeof lo === "string") {
        classes.push(lo);
        continue;
      }
      if (src[i] === "-" && src[i + 1] !== "]" && src[i + 1] !== undefined) {
        i++;
        const hi = classItem();
        if (typeof hi === "string") fail("bad character range");
        if ((hi as number) < lo) fail("bad character range");
        ranges.push([lo, hi as number]);
      } else ranges.push([lo, lo]);
    }
  };

  /** One member of a class: a code point or a class escape. */
  const classItem = (): number | ClassEscape => {
    const c = src[i]!;
    if (c !== "\\") {
      const cp = src.codePointAt(i)!;
      i += cp > 0xffff ? 2 : 1;
      return cp;
    }
    const e = src[i + 1];
    if (e === undefined) fail("bad escape (end of pattern)");
    if (CLASS_ESCAPES.has(e!)) {
      i += 2;
      return e as ClassEscape;
    }
    if (/[ABZ89]/.test(e!)) fail(`bad escape \\${e} in a character set`);
    return escapedCodePoint(true);
  };

  const root = alternation();
  if (i < src.length) fail("unbalanced parenthesis");
  return { root, groupCount, names };
}
