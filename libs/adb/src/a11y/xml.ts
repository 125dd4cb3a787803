/**
 * A bounded reader for the XML a device prints as its view hierarchy: elements with attributes, nothing
 * else. Why our own and not an npm parser: the input is hostile by assumption (any app's text lands in
 * it), the subset is tiny (KXmlSerializer's output: a declaration, elements, quoted attributes, five named
 * entities and numeric references), and what must be refused — DOCTYPE and entity declarations, deep
 * nesting, too many nodes, bad UTF-8, a cut-off document — is easier to guarantee in 200 lines that do
 * nothing else than to configure out of a general parser. One pass, no recursion, no backtracking
 * regexes: time and memory are linear in the (already bounded) input.
 */
import { FarmError } from "@farm/errors";

export type XmlRefusalCode = "bad_utf8" | "too_large" | "too_deep" | "too_many_nodes" | "malformed" | "unterminated" | "forbidden";

/** The device's answer is not acceptable as a tree; the message says where (line:column) and why. */
export class XmlRefused extends FarmError<XmlRefusalCode> {
  override readonly name = "XmlRefused";
}

export interface XmlHandlers {
  /** An element opened (its attributes in document order); `depth` 1 = the document element. */
  open(name: string, attrs: Map<string, string>, depth: number, at: () => string): void;
  close(name: string): void;
}

export interface XmlBounds {
  maxDepth: number;
  /** Elements over the whole document. */
  maxElements: number;
  /** Attributes on one element. */
  maxAttributes: number;
}

const NAME = /[A-Za-z_:][-A-Za-z0-9_:.]*/y;
const SPACE = /[ \t\r\n]*/y;

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes strict UTF-8; bad bytes are refused with their offset. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new XmlRefused("bad_utf8", `not valid UTF-8 (first bad byte at offset ${firstBadUtf8(bytes)}); the device's output is corrupt or not a dump`);
  }
}

/** Offset of the first byte that breaks UTF-8 (overlong forms, surrogates and > U+10FFFF included). */
function firstBadUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    const n = c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
    if (n < 0) return i;
    if (n > 0 && i + n >= b.length) return i;
    const c1 = b[i + 1] ?? 0;
    if (n >= 1 && (c1 & 0xc0) !== 0x80) return i;
    if ((c === 0xe0 && c1 < 0xa0) || (c === 0xed && c1 > 0x9f) || (c === 0xf0 && c1 < 0x90) || (c === 0xf4 && c1 > 0x8f)) return i;
    for (let k = 2; k <= n; k++) if (((b[i + k] ?? 0) & 0xc0) !== 0x80) return i;
    i += n + 1;
  }
  return b.length;
}

/** Reads `text` (one document) and calls `h` for each element; throws XmlRefused on anything else. */
export function readXml(text: string, bounds: XmlBounds, h: XmlHandlers): void {
  let pos = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const stack: string[] = [];
  let elements = 0;
  let rootSeen = false;
  const where = (at = pos): string => {
    let line = 1;
    let col = 1;
    for (let i = 0; i < at && i < text.length; i++) {
      if (text.charCodeAt(i) === 10) {
        line++;
        col = 1;
      } else col++;
    }
    return `line ${line}:${col}`;
  };
  const refuse = (code: XmlRefusalCode, what: string, at = pos): never => {
    throw new XmlRefused(code, `${what} at ${where(at)}`);
  };
  const name = (): string => {
    NAME.lastIndex = pos;
    const m = NAME.exec(text);
    if (!m) refuse(pos >= text.length ? "unterminated" : "malformed", pos >= text.length ? "document ends inside a tag (output cut off?)" : `expected a name, found ${JSON.stringify(text.slice(pos, pos + 10))}`);
    pos = NAME.lastIndex;
    return m![0];
  };
  const space = (): void => {
    SPACE.lastIndex = pos;
    SPACE.exec(text);
    pos = SPACE.lastIndex;
  };
  if (text.startsWith("<?xml", pos)) {
    const end = text.indexOf("?>", pos);
    if (end < 0) refuse("unterminated", "XML declaration never ends");
    pos = end + 2;
  }
  for (;;) {
    const lt = text.indexOf("<", pos);
    const chunk = text.slice(pos, lt < 0 ? text.length : lt);
    if (chunk.trim() !== "") refuse("malformed", `unexpected text ${JSON.stringify(chunk.trim().slice(0, 40))}`, pos + chunk.search(/\S/));
    if (lt < 0) break;
    pos = lt + 1;
    const c = text[pos];
    if (c === "!" || c === "?") refuse("forbidden", `${c === "!" ? "DOCTYPE, entity declarations, comments and CDATA are" : "processing instructions are"} not part of a view dump; refused`, lt);
    if (c === "/") {
      pos++;
      const n = name();
      space();
      if (text[pos] !== ">") refuse(pos >= text.length ? "unterminated" : "malformed", `end tag </${n}> is not closed`);
      pos++;
      const open = stack.pop();
      if (open !== n) refuse("malformed", open === undefined ? `end tag </${n}> without a start tag` : `end tag </${n}> closes <${open}>`, lt);
      h.close(n);
      if (stack.length === 0) break;
      continue;
    }
    const n = name();
    const attrs = readAttributes(n, lt);
    if (++elements > bounds.maxElements) refuse("too_many_nodes", `more than ${bounds.maxElements} elements`, lt);
    if (stack.length + 1 > bounds.maxDepth) refuse("too_deep", `nesting deeper than ${bounds.maxDepth}`, lt);
    rootSeen = true;
    h.open(n, attrs, stack.length + 1, () => where(lt));
    if (text.startsWith("/>", pos)) {
      pos += 2;
      h.close(n);
      if (stack.length === 0) break;
    } else if (text[pos] === ">") {
      pos++;
      stack.push(n);
    } else refuse(pos >= text.length ? "unterminated" : "malformed", `tag <${n}> is not closed`);
  }
  if (stack.length > 0) refuse("unterminated", `document ends with <${stack.at(-1)}> still open (output cut off?)`, text.length);
  if (!rootSeen) refuse("unterminated", "no element in the output", text.length);
  const rest = text.slice(pos);
  if (rest.trim() !== "") refuse("malformed", `unexpected content after the document: ${JSON.stringify(rest.trim().slice(0, 40))}`);

  function readAttributes(el: string, lt: number): Map<string, string> {
    const attrs = new Map<string, string>();
    for (;;) {
      const before = pos;
      space();
      const c = text[pos];
      if (c === ">" || c === "/" || c === undefined) return attrs;
      if (pos === before) refuse("malformed", `<${el}>: attributes must be separated by blanks`);
      const an = name();
      space();
      if (text[pos] !== "=") refuse(pos >= text.length ? "unterminated" : "malformed", `<${el}>: attribute ${an} has no value`);
      pos++;
      space();
      const q = text[pos];
      if (q !== '"' && q !== "'") refuse(pos >= text.length ? "unterminated" : "malformed", `<${el}>: value of ${an} is not quoted`);
      const end = text.indexOf(q!, pos + 1);
      if (end < 0) refuse("unterminated", `<${el}>: value of ${an} never ends (output cut off?)`);
      const raw = text.slice(pos + 1, end);
      if (raw.includes("<")) refuse("malformed", `<${el}>: '<' inside the value of ${an}`, pos);
      if (attrs.has(an)) refuse("malformed", `<${el}>: attribute ${an} given twice`, pos);
      if (attrs.size >= bounds.maxAttributes) refuse("too_large", `<${el}>: more than ${bounds.maxAttributes} attributes`, lt);
      attrs.set(an, raw.includes("&") ? decodeEntities(raw, pos + 1) : raw);
      pos = end + 1;
    }
  }

  function decodeEntities(raw: string, base: number): string {
    return raw.replace(/&([^;&]{0,12});?/g, (m, ref: string, off: number) => {
      if (!m.endsWith(";")) return refuse("malformed", `'&' that starts no reference`, base + off);
      const named = ref === "amp" ? "&" : ref === "lt" ? "<" : ref === "gt" ? ">" : ref === "quot" ? '"' : ref === "apos" ? "'" : undefined;
      if (named !== undefined) return named;
      const num = /^#(?:x([0-9A-Fa-f]{1,6})|([0-9]{1,7}))$/.exec(ref);
      if (!num) return refuse("forbidden", `unknown entity &${ref}; (only the five XML entities and numeric references)`, base + off);
      const cp = num[1] !== undefined ? parseInt(num[1], 16) : Number(num[2]);
      const ok = cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
      if (!ok) return refuse("malformed", `&${ref}; is not a character XML allows`, base + off);
      return String.fromCodePoint(cp);
    });
  }
}
