/**
 * Character sets of the regex engine, over Unicode code points (as Python's `re` sees a str): ranges plus the
 * class escapes `\d \D \s \S \w \W` with Python 3's Unicode meanings. An ASCII table makes the common case cheap.
 */

export type ClassEscape = "d" | "D" | "s" | "S" | "w" | "W";

const DIGIT = /\p{Nd}/u;
const WORD = /[\p{L}\p{N}_]/u;
/** Python's str.isspace(): ASCII whitespace, \x1c-\x1f, \x85 and the Unicode space separators. */
const SPACE = /[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

export function isWordCodePoint(cp: number): boolean {
  if (cp < 128) return (cp >= 48 && cp <= 57) || (cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122) || cp === 95;
  return WORD.test(String.fromCodePoint(cp));
}

function inClass(c: ClassEscape, cp: number): boolean {
  switch (c) {
    case "d":
      return cp < 128 ? cp >= 48 && cp <= 57 : DIGIT.test(String.fromCodePoint(cp));
    case "D":
      return !inClass("d", cp);
    case "s":
      return SPACE.test(String.fromCodePoint(cp));
    case "S":
      return !inClass("s", cp);
    case "w":
      return isWordCodePoint(cp);
    case "W":
      return !isWordCodePoint(cp);
  }
}

const singletons = new Map<number, CharSet>();

export class CharSet {
  /** Membership of the ASCII characters, filled on first use. */
  private ascii: Uint8Array | undefined;

  constructor(
    /** Inclusive [lo, hi] pairs. */
    private readonly ranges: readonly (readonly [number, number])[],
    private readonly classes: readonly ClassEscape[],
    private readonly negated: boolean,
  ) {}

  static of(cp: number): CharSet {
    let set = singletons.get(cp);
    if (!set) {
      set = new CharSet([[cp, cp]], [], false);
      if (singletons.size < 4096) singletons.set(cp, set);
    }
    return set;
  }

  /** Python's `.` without DOTALL: anything but a newline. */
  static anyButNewline(): CharSet {
    return new CharSet([[10, 10]], [], true);
  }

  static cls(c: ClassEscape): CharSet {
    return new CharSet([], [c], false);
  }

  has(cp: number): boolean {
    if (cp >= 128) return this.slowHas(cp);
    if (!this.ascii) {
      this.ascii = new Uint8Array(128);
      for (let c = 0; c < 128; c++) this.ascii[c] = this.slowHas(c) ? 1 : 0;
    }
    return this.ascii[cp] === 1;
  }

  private slowHas(cp: number): boolean {
    let hit = false;
    for (const [lo, hi] of this.ranges) if (cp >= lo && cp <= hi) hit = true;
    if (!hit) for (const c of this.classes) if (inClass(c, cp)) hit = true;
    return hit !== this.negated;
  }
}
