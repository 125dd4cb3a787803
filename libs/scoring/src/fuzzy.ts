/**
 * The `fuzzy` comparison (FAMILIES.md): an agent's answer against the expected one, as AndroidWorld judges answers.
 * Both texts are normalised (lower-cased, punctuation removed, whitespace collapsed and trimmed); two numbers
 * compare as numbers ("1,200.0" = "1200"); otherwise they are equal, or similar the way AndroidWorld's
 * `fuzzy_match_lib.fuzzy_match` decides: difflib's `SequenceMatcher(None, a, b).ratio() >= 0.9`.
 */

/** AndroidWorld's `_MIN_DIFF_SIMILARITY` (utils/fuzzy_match_lib.py). */
export const MIN_DIFF_SIMILARITY = 0.9;
/** Longest text compared (the ratio is quadratic in the worst case); longer texts compare by their first characters. */
export const MAX_FUZZY_CHARS = 2000;

const PUNCTUATION = /[\p{P}\p{S}]/gu;

export function normaliseAnswer(s: string): string {
  return s.slice(0, MAX_FUZZY_CHARS).toLowerCase().replace(PUNCTUATION, "").replace(/\s+/g, " ").trim();
}

/** A plain decimal number as an agent may write it ("1,200", "-3.50", "42"), else undefined. */
function asNumber(s: string): number | undefined {
  const t = s.trim().replace(/^[$€£¥]/u, "").replace(/(\d),(?=\d{3}\b)/g, "$1");
  if (!/^[-+]?(\d+\.?\d*|\.\d+)$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

export function fuzzyEquals(observed: string, expected: string): boolean {
  const a = asNumber(observed.slice(0, MAX_FUZZY_CHARS));
  const b = asNumber(expected.slice(0, MAX_FUZZY_CHARS));
  if (a !== undefined && b !== undefined) return a === b;
  const x = normaliseAnswer(observed);
  const y = normaliseAnswer(expected);
  if (x === y) return true;
  return similarity(x, y) >= MIN_DIFF_SIMILARITY;
}

/**
 * difflib's `SequenceMatcher(None, a, b).ratio()`: 2·M / (len(a) + len(b)), M = characters in the matching blocks
 * found by repeatedly taking the longest common block (earliest in `a`, then in `b`) and recursing on both sides;
 * with difflib's "autojunk" (b of 200+ characters: a character that makes up more than 1% + 1 of b is never
 * the start of a match).
 */
export function similarity(a: string, b: string): number {
  const A = [...a];
  const B = [...b];
  const total = A.length + B.length;
  if (total === 0) return 1;
  const b2j = new Map<string, number[]>();
  B.forEach((ch, j) => {
    const l = b2j.get(ch);
    if (l) l.push(j);
    else b2j.set(ch, [j]);
  });
  if (B.length >= 200) {
    const popular = Math.floor(B.length / 100) + 1;
    for (const [ch, l] of [...b2j]) if (l.length > popular) b2j.delete(ch);
  }
  let matched = 0;
  const queue: [number, number, number, number][] = [[0, A.length, 0, B.length]];
  while (queue.length) {
    const [alo, ahi, blo, bhi] = queue.pop()!;
    const [i, j, k] = longestMatch(A, B, b2j, alo, ahi, blo, bhi);
    if (k === 0) continue;
    matched += k;
    if (alo < i && blo < j) queue.push([alo, i, blo, j]);
    if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
  }
  return (2 * matched) / total;
}

/** difflib's find_longest_match without a junk function (isjunk=None), including its extension over equal neighbours. */
function longestMatch(A: string[], B: string[], b2j: Map<string, number[]>, alo: number, ahi: number, blo: number, bhi: number): [number, number, number] {
  let besti = alo;
  let bestj = blo;
  let bestsize = 0;
  let j2len = new Map<number, number>();
  for (let i = alo; i < ahi; i++) {
    const next = new Map<number, number>();
    for (const j of b2j.get(A[i]!) ?? []) {
      if (j < blo) continue;
      if (j >= bhi) break;
      const k = (j2len.get(j - 1) ?? 0) + 1;
      next.set(j, k);
      if (k > bestsize) {
        besti = i - k + 1;
        bestj = j - k + 1;
        bestsize = k;
      }
    }
    j2len = next;
  }
  // Popular characters were left out of b2j: extend the match over equal characters on both sides, as difflib does.
  while (besti > alo && bestj > blo && A[besti - 1] === B[bestj - 1]) {
    besti--;
    bestj--;
    bestsize++;
  }
  while (besti + bestsize < ahi && bestj + bestsize < bhi && A[besti + bestsize] === B[bestj + bestsize]) bestsize++;
  return [besti, bestj, bestsize];
}
