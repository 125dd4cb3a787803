/**
 * A lexical scan of text-format input: which characters are strings, comments or other tokens, and on which
 * line. It produces no values — protobufjs parses the file; this scan only serves the escape pre-pass and the
 * field → line index used in validation messages (protobufjs keeps no positions in what it returns).
 */

export interface Token {
  kind: "word" | "string" | "punct";
  text: string;
  line: number;
}

const PUNCT = new Set([..."{}<>:[],;-"]);
const WORD_END = new Set([..." \t\n\r\v\f#\"'{}<>:[],;-"]);

/**
 * Tokens of `text`; lenient (an unterminated string ends at the line end) because protobufjs reports syntax errors.
 * A plain loop, not a regex: no input length or content can exhaust a stack or backtrack.
 */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === "\n") {
      line++;
      i++;
    } else if (ch === " " || ch === "\t" || ch === "\r" || ch === "\v" || ch === "\f") {
      i++;
    } else if (ch === "#") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (ch === '"' || ch === "'") {
      const end = stringEnd(text, i);
      tokens.push({ kind: "string", text: text.slice(i, end), line });
      i = end;
    } else if (PUNCT.has(ch)) {
      tokens.push({ kind: "punct", text: ch, line });
      i++;
    } else {
      const start = i;
      while (i < text.length && !WORD_END.has(text[i]!)) i++;
      tokens.push({ kind: "word", text: text.slice(start, i), line });
    }
  }
  return tokens;
}

/** Index just past the closing quote of the string literal starting at `start` (or the line end). */
function stringEnd(text: string, start: number): number {
  const quote = text[start];
  let i = start + 1;
  while (i < text.length) {
    const ch = text[i];
    if (ch === "\\" && text[i + 1] !== "\n") i += 2;
    else if (ch === quote) return i + 1;
    else if (ch === "\n") return i;
    else i++;
  }
  return text.length;
}

/** Escapes protobufjs understands (and Python's text format too); any other `\X` Python keeps as backslash + X. */
const KNOWN_ESCAPES = new Set([..."abfnrtv\\'\"?01234567xuUX"]);

export interface EscapeFix {
  line: number;
  escape: string;
}

/**
 * Python's text-format parser keeps an unknown escape such as `\[` as a backslash plus the character, and real
 * files rely on it (regexes like "\[Alarm\]"); protobufjs rejects it. Rewrite such escapes inside string literals
 * (not comments) to `\\X`, which gives the value Python reads, and report each one.
 */
export function rewriteLenientEscapes(text: string): { text: string; fixes: EscapeFix[] } {
  const fixes: EscapeFix[] = [];
  let out = "";
  let line = 1;
  let i = 0;
  let copiedUpTo = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === "\n") {
      line++;
      i++;
    } else if (ch === "#") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (ch === '"' || ch === "'") {
      const end = stringEnd(text, i);
      for (let j = i + 1; j < end - 1; j++) {
        if (text[j] !== "\\") continue;
        const next = text[j + 1];
        if (next !== undefined && !KNOWN_ESCAPES.has(next) && next !== "\n") {
          out += text.slice(copiedUpTo, j) + "\\\\" + next;
          copiedUpTo = j + 2;
          fixes.push({ line, escape: `\\${next}` });
        }
        j++;
      }
      i = end;
    } else {
      i++;
    }
  }
  return { text: out + text.slice(copiedUpTo), fixes };
}
