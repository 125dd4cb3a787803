/**
 * Word expansion of the simulated `sh`: parameters, field splitting of unquoted parameters, and
 * pathname expansion (globbing) of unquoted `*`, `?` and `[…]` against the device's file system.
 * Nothing here runs a command (see lexer.ts).
 */
import { FarmError } from "@farm/errors";
import type { Word } from "./lexer.ts";

/** Longest text one word may expand to (a variable doubled in a loop stays bounded). */
export const MAX_EXPANSION_CHARS = 1 << 20;

/** A word whose expansion passed MAX_EXPANSION_CHARS; the shell ends the command line. */
export class ExpansionTooLong extends FarmError<"expansion_too_long"> {
  override readonly name = "ExpansionTooLong";
  /** the same input fails the same way (not retryable). */
  constructor() {
    super("expansion_too_long", `a word expanded to more than ${MAX_EXPANSION_CHARS} characters`);
  }
}

function checked(text: string): string {
  if (text.length > MAX_EXPANSION_CHARS) throw new ExpansionTooLong();
  return text;
}

/** Where parameters come from: the shell's variables and its last exit status. */
export interface ParamSource {
  get(name: string): string | undefined;
}

/** What globbing needs of the file system. */
export interface GlobFs {
  isDirectory(path: string): boolean;
  list(dir: string): { name: string }[] | undefined;
}

/** Most paths one pattern may produce (a `/*\/*\/*` over a big tree stays bounded). */
export const MAX_GLOB_RESULTS = 10_000;

interface Field {
  text: string;
  /** The same text with the quoted characters backslash-escaped: the glob pattern. */
  pattern: string;
  /** An unquoted glob character is in it. */
  glob: boolean;
}

const GLOB_CHARS = /[*?[]/;
const IFS = /[ \t\n]+/;

function escapeGlob(text: string): string {
  return text.replace(/[\\*?[\]]/g, (c) => "\\" + c);
}

/** A word as one string: parameters substituted, no splitting, no globbing (assignments, redirection targets, `case`-like uses). */
export function expandToString(word: Word, params: ParamSource): string {
  let out = "";
  for (const p of word.parts) out = checked(out + (p.kind === "lit" ? p.text : (params.get(p.name) ?? "")));
  return out;
}

/** A word as the fields a command receives: parameters substituted, unquoted ones split on blanks, unquoted patterns globbed. */
export function expandWord(word: Word, params: ParamSource, fs: GlobFs, cwd = "/"): string[] {
  const fields: Field[] = [];
  let cur: Field | undefined;
  const current = (): Field => (cur ??= { text: "", pattern: "", glob: false });
  for (const part of word.parts) {
    if (part.kind === "lit") {
      const f = current();
      f.text = checked(f.text + part.text);
      if (part.quoted) f.pattern += escapeGlob(part.text);
      else {
        f.pattern += part.text;
        if (GLOB_CHARS.test(part.text)) f.glob = true;
      }
      continue;
    }
    const value = params.get(part.name) ?? "";
    if (fields.length > MAX_EXPANSION_CHARS / 2) throw new ExpansionTooLong();
    if (part.quoted) {
      const f = current();
      f.text = checked(f.text + value);
      f.pattern += escapeGlob(value);
      continue;
    }
    // Unquoted: split on blanks; a blank at either end ends the field being built.
    const pieces = value.split(IFS);
    pieces.forEach((piece, i) => {
      if (i > 0 && cur) {
        fields.push(cur);
        cur = undefined;
      }
      if (piece === "") return;
      const f = current();
      f.text = checked(f.text + piece);
      f.pattern += piece;
      if (GLOB_CHARS.test(piece)) f.glob = true;
    });
  }
  if (cur) fields.push(cur);
  // A word that was only empty unquoted parameters disappears; `""` stays as one empty field.
  if (fields.length === 0 && word.parts.some((p) => p.quoted)) return [""];
  const out: string[] = [];
  for (const f of fields) {
    if (!f.glob) {
      out.push(f.text);
      continue;
    }
    const matches = glob(f.pattern, fs, cwd);
    if (matches.length === 0) out.push(f.text); // no match: the word stays as it is (mksh)
    else out.push(...matches);
  }
  return out;
}

/** Splits a pattern at unescaped `/`. */
function splitPattern(pattern: string): string[] {
  const segs: string[] = [];
  let cur = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\" && i + 1 < pattern.length) {
      cur += c + pattern[++i];
    } else if (c === "/") {
      segs.push(cur);
      cur = "";
    } else cur += c;
  }
  segs.push(cur);
  return segs;
}

function hasMeta(seg: string): boolean {
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === "\\") i++;
    else if (c === "*" || c === "?" || c === "[") return true;
  }
  return false;
}

function unescape(seg: string): string {
  return seg.replace(/\\(.)/g, "$1");
}

/** One path segment's pattern as a regular expression (`*` `?` `[…]`, `[!…]`; a leading dot must be matched literally). */
function segmentRegex(seg: string): RegExp {
  let re = "^";
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === "\\" && i + 1 < seg.length) {
      re += escapeRegex(seg[++i]!);
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const close = seg.indexOf("]", i + 2);
      if (close < 0) {
        re += "\\[";
        continue;
      }
      let body = seg.slice(i + 1, close);
      let negate = false;
      if (body.startsWith("!") || body.startsWith("^")) {
        negate = true;
        body = body.slice(1);
      }
      re += `[${negate ? "^" : ""}${body.replace(/\\/g, "\\\\").replace(/]/g, "\\]")}]`;
      i = close;
    } else re += escapeRegex(c);
  }
  return new RegExp(re + "$");
}

function escapeRegex(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? "\\" + c : c;
}

/** Paths matching `pattern`, sorted; relative patterns are taken from `cwd` and reported relative. */
export function glob(pattern: string, fs: GlobFs, cwd = "/"): string[] {
  const absolute = pattern.startsWith("/");
  const segs = splitPattern(absolute ? pattern.slice(1) : pattern);
  // Each candidate: the path as it will be printed, and the absolute path to look in.
  let candidates: { shown: string; abs: string }[] = [{ shown: absolute ? "/" : "", abs: absolute ? "/" : cwd }];
  const join = (a: string, b: string): string => (a === "" ? b : a.endsWith("/") ? a + b : `${a}/${b}`);
  for (let s = 0; s < segs.length; s++) {
    const seg = segs[s]!;
    const last = s === segs.length - 1;
    const next: { shown: string; abs: string }[] = [];
    if (seg === "") {
      // `a//b` or a trailing `/`: only directories go on.
      for (const c of candidates) if (fs.isDirectory(c.abs)) next.push(last ? { shown: c.shown.endsWith("/") ? c.shown : c.shown + "/", abs: c.abs } : c);
      candidates = next;
      continue;
    }
    if (!hasMeta(seg)) {
      const name = unescape(seg);
      for (const c of candidates) next.push({ shown: join(c.shown, name), abs: join(c.abs, name) });
      candidates = last ? next.filter((c) => exists(fs, c.abs)) : next;
      continue;
    }
    const re = segmentRegex(seg);
    const dotOk = seg.startsWith(".") || seg.startsWith("\\.");
    for (const c of candidates) {
      const entries = fs.list(c.abs);
      if (!entries) continue;
      for (const e of entries) {
        if (e.name.startsWith(".") && !dotOk) continue;
        if (!re.test(e.name)) continue;
        next.push({ shown: join(c.shown, e.name), abs: join(c.abs, e.name) });
        if (next.length >= MAX_GLOB_RESULTS) break;
      }
    }
    candidates = next;
  }
  return candidates.map((c) => c.shown).sort();
}

function exists(fs: GlobFs, path: string): boolean {
  if (fs.isDirectory(path)) return true;
  const slash = path.lastIndexOf("/");
  const dir = slash <= 0 ? "/" : path.slice(0, slash);
  const name = path.slice(slash + 1);
  return fs.list(dir)?.some((e) => e.name === name) ?? false;
}
