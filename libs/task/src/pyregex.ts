/**
 * Python `re` syntax → an equivalent JavaScript RegExp (task-format.md §6.4). Task regexes are applied like
 * Python's re.match: anchored at the start only, so the result is `^(?:…)`, compiled without the u flag (Python
 * allows escaping any punctuation, which unicode-mode JS rejects). Constructs without a faithful translation are
 * rejected with a PyRegexError rather than silently changing meaning.
 *
 * Known, accepted differences (inherent to non-unicode JS): `\d`, `\w`, `\b` are ASCII-only in JS but Unicode-aware
 * in Python 3 str patterns; `\s` differs on U+001C–U+001F, U+0085 (Python) and U+FEFF (JS); `.` and classes see
 * UTF-16 code units, so an astral character counts as two.
 */
import type { PyRegex } from "./model.ts";
import { coerceError } from "@farm/errors";

export class PyRegexError extends Error {
  override readonly name = "PyRegexError";
}

const NEVER_MATCHES = /^(?:[^\s\S])/;

/** Escapes with the same meaning in Python and in non-unicode JS, outside and inside character classes. */
const SAME_ESCAPES = new Set([..."dDsSwWfnrtv"]);

/** Convert and compile; throws PyRegexError for Python syntax errors and constructs that cannot be translated. */
export function pyRegex(source: string): PyRegex {
  if (source === "") return { source, regex: NEVER_MATCHES };
  const body = translate(source);
  let regex: RegExp;
  try {
    regex = new RegExp(`^(?:${body})`);
  } catch (e) {
    throw new PyRegexError(`does not compile as a JavaScript regex: ${coerceError(e).message}`);
  }
  return { source, regex };
}

/** Like pyRegex, but matching the whole text (the early-2021 runtime matched `^…$`); `source` stays as written. */
export function pyRegexWhole(source: string): PyRegex {
  if (source === "") return { source, regex: NEVER_MATCHES };
  return { source, regex: pyRegex(`(?:${source})$`).regex };
}

function translate(src: string): string {
  let out = "";
  let i = 0;
  let groups = 0;
  const names = new Set<string>();
  /** Groups not yet closed (number and name; 0 for non-capturing): Python rejects references to them. */
  const open: { num: number; name: string }[] = [];
  /** True right after a quantifier: Python 3.11 possessive forms (`a*+`) have no JS equivalent. */
  let afterQuantifier = false;

  const fail = (what: string): never => {
    throw new PyRegexError(`${what} at position ${i} of ${JSON.stringify(src)}`);
  };

  while (i < src.length) {
    const ch = src[i]!;
    const wasQuantifier = afterQuantifier;
    afterQuantifier = false;
    if (ch === "\\") {
      out += escapeOutsideClass();
    } else if (ch === "[") {
      out += characterClass();
    } else if (ch === "(") {
      out += groupOpening();
    } else if (ch === "*" || ch === "+" || ch === "?") {
      if (wasQuantifier && ch === "+") fail("possessive quantifier (Python 3.11) cannot be expressed in JavaScript");
      if (wasQuantifier && ch === "?") {
        out += "?"; // lazy modifier
        i++;
        continue;
      }
      out += ch;
      i++;
      afterQuantifier = true;
    } else if (ch === "{") {
      const m = /^\{(\d*)(?:(,)(\d*))?\}/.exec(src.slice(i));
      if (m && (m[1] !== "" || m[2] !== undefined)) {
        // Python reads `{,n}` as `{0,n}`; JS (non-unicode) would read it as literal text.
        out += `{${m[1] || "0"}${m[2] ?? ""}${m[3] ?? ""}}`;
        i += m[0].length;
        afterQuantifier = true;
      } else {
        out += "\\{";
        i++;
      }
    } else if (ch === "}") {
      out += "\\}";
      i++;
    } else if (ch === ".") {
      out += "[^\\n]"; // Python's `.` excludes only \n; JS's also excludes \r, U+2028, U+2029
      i++;
    } else if (ch === "$") {
      out += "(?=\\n?$)"; // Python's `$` also matches just before a final newline
      i++;
    } else {
      if (ch === ")") {
        if (!open.pop()) fail("unbalanced parenthesis");
        afterQuantifier = false;
      }
      out += ch; // `^` (start of input without the m flag), `|`, `)`, literals
      i++;
    }
  }
  return out;

  function escapeOutsideClass(): string {
    const c = src[i + 1];
    if (c === undefined) fail("trailing backslash");
    if (c === "A") {
      i += 2;
      return "^";
    }
    if (c === "Z") {
      i += 2;
      return "$";
    }
    if (c === "b" || c === "B") {
      i += 2;
      return `\\${c}`;
    }
    if (c! >= "1" && c! <= "9") {
      // A group reference (Python reads \1..\99, or a 3-digit octal escape).
      const three = src.slice(i + 1, i + 4);
      if (/^[0-7]{3}$/.test(three)) {
        i += 4;
        return octal(three);
      }
      const m = /^\d{1,2}/.exec(src.slice(i + 1))!;
      const n = Number(m[0]);
      if (n > groups) fail(`invalid group reference \\${n}`);
      if (open.some((g) => g.num === n)) fail(`cannot refer to the open group ${n}`);
      i += 1 + m[0].length;
      return `(?:\\${n})`;
    }
    return commonEscape(false);
  }

  /** Escapes valid both outside and inside classes. */
  function commonEscape(inClass: boolean): string {
    const c = src[i + 1]!;
    if (c === "0" || (inClass && c >= "1" && c <= "7")) {
      const m = /^[0-7]{1,3}/.exec(src.slice(i + 1))!;
      i += 1 + m[0].length;
      return octal(m[0]);
    }
    if (SAME_ESCAPES.has(c)) {
      i += 2;
      return `\\${c}`;
    }
    if (c === "a") {
      i += 2;
      return "\\x07";
    }
    if (c === "x") {
      const m = /^[0-9A-Fa-f]{2}/.exec(src.slice(i + 2));
      if (!m) fail("incomplete \\x escape");
      i += 4;
      return `\\x${m![0]}`;
    }
    if (c === "u" || c === "U") {
      const len = c === "u" ? 4 : 8;
      const hex = src.slice(i + 2, i + 2 + len);
      if (!new RegExp(`^[0-9A-Fa-f]{${len}}$`).test(hex)) fail(`incomplete \\${c} escape`);
      const cp = parseInt(hex, 16);
      i += 2 + len;
      if (cp <= 0xffff) return `\\u${cp.toString(16).padStart(4, "0")}`;
      if (inClass || cp > 0x10ffff) fail("a character outside the BMP in a class cannot be expressed without the u flag");
      const s = String.fromCodePoint(cp);
      return `(?:\\u${s.charCodeAt(0).toString(16)}\\u${s.charCodeAt(1).toString(16)})`;
    }
    if (/[A-Za-z0-9]/.test(c)) fail(`bad escape \\${c} (Python rejects it)`);
    i += 2;
    // Any other character escaped stands for itself in Python.
    return /[\\^$.|?*+()[\]{}\/-]/.test(c) ? `\\${c}` : c;
  }

  function octal(digits: string): string {
    const v = parseInt(digits, 8);
    if (v > 0o377) fail(`octal escape \\${digits} out of range`);
    return `\\x${v.toString(16).padStart(2, "0")}`;
  }

  function characterClass(): string {
    let cls = "[";
    i++;
    if (src[i] === "^") {
      cls += "^";
      i++;
    }
    if (src[i] === "]") {
      cls += "\\]"; // Python: a `]` first in a class is literal; JS would read `[]` as an empty class
      i++;
    }
    for (;;) {
      const c = src[i];
      if (c === undefined) fail("unterminated character set");
      if (c === "]") {
        i++;
        return `${cls}]`;
      }
      if (c === "\\") {
        const e = src[i + 1];
        if (e === "b") {
          i += 2;
          cls += "\\x08";
        } else if (e !== undefined && /[ABZ89]/.test(e)) {
          fail(`bad escape \\${e} in a character set`);
        } else {
          cls += commonEscape(true);
        }
      } else if (c === "[") {
        cls += "\\[";
        i++;
      } else {
        cls += c;
        i++;
      }
    }
  }

  function groupOpening(): string {
    const rest = src.slice(i);
    if (!rest.startsWith("(?")) {
      groups++;
      open.push({ num: groups, name: "" });
      i++;
      return "(";
    }
    let m: RegExpExecArray | null;
    if ((m = /^\(\?P<([^>]*)>/.exec(rest))) {
      const name = m[1]!;
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) fail(`bad group name '${name}'`);
      if (names.has(name)) fail(`redefinition of group name '${name}'`);
      names.add(name);
      groups++;
      open.push({ num: groups, name });
      i += m[0].length;
      return `(?<${name}>`;
    }
    if ((m = /^\(\?P=([^)]*)\)/.exec(rest))) {
      const name = m[1]!;
      if (!names.has(name)) fail(`unknown group name '${name}'`);
      if (open.some((g) => g.name === name)) fail(`cannot refer to the open group '${name}'`);
      i += m[0].length;
      return `(?:\\k<${name}>)`;
    }
    if ((m = /^\(\?#[^)]*\)/.exec(rest))) {
      i += m[0].length; // a Python comment group
      return "";
    }
    for (const same of ["(?:", "(?=", "(?!", "(?<=", "(?<!"]) {
      if (rest.startsWith(same)) {
        open.push({ num: 0, name: "" });
        i += same.length;
        return same;
      }
    }
    if (rest.startsWith("(?(")) fail("conditional group (?(...)...) has no JavaScript equivalent");
    if (rest.startsWith("(?>")) fail("atomic group (?>...) has no JavaScript equivalent");
    if (/^\(\?[aiLmsux-]/.test(rest)) fail("inline flags such as (?i) are not supported; write the pattern without flags, e.g. [Ss] for case");
    if (rest.startsWith("(?<")) fail("named groups are written (?P<name>...) in Python");
    return fail("unknown extension (?" + (rest[2] ?? "") + ")");
  }
}
