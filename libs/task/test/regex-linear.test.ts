/**
 * The task regex engine runs in linear time: the classic catastrophic patterns finish on long lines (a backtracking
 * engine takes longer than the age of the universe on them), and on random patterns it agrees with a backtracking
 * engine (JavaScript's RegExp, same leftmost-first semantics) wherever that one is fast.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { pyRegex, PyRegexError, REGEX_LIMITS } from "../src/index.ts";

const MB = 1_000_000;

/** Pattern, a 1 MB subject that makes a backtracking engine explode, and whether it matches. */
const CATASTROPHIC: [string, string, boolean][] = [
  ["(a+)+$", `${"a".repeat(MB)}!`, false],
  ["(a|a)*b", "a".repeat(MB), false],
  ["(a|aa)*c", "a".repeat(MB), false],
  ["(.*a){20}", "a".repeat(MB / 10), true],
  ["(.*a){20}b", "a".repeat(MB / 10), false],
  ["(a*)*$", `${"a".repeat(MB)}!`, false],
  ["(\\w+\\s?)+$", `${"word ".repeat(MB / 5)}!`, false],
  ["^(([a-z])+.)+[A-Z]([a-z])+$", `${"aaaaaaaaaaaa".repeat(MB / 12)}!`, false],
  ["(x+x+)+y", "x".repeat(MB), false],
  ["^(.*?)START(.*?)com.android.calendar", "x".repeat(MB), false],
  ["^extra: (?P<name>[^ ]*) (?P<extra>.*)$", `extra: grid ${"[1, 2, 3] ".repeat(MB / 10)}`, true],
];

for (const [pattern, subject, expected] of CATASTROPHIC) {
  test(`linear on ${pattern} against ${subject.length} characters`, { timeout: 60_000 }, () => {
    const re = pyRegex(pattern);
    const t0 = performance.now();
    assert.equal(re.test(subject), expected);
    const ms = performance.now() - t0;
    // A generous bound for a busy machine; backtracking needs ~2^n steps here, i.e. forever.
    assert.ok(ms < 20_000, `${pattern}: ${ms} ms`);
  });
}

test("doubling the line length roughly doubles the time (no super-linear growth)", { timeout: 120_000 }, () => {
  const re = pyRegex("(a+)+$");
  const time = (n: number): number => {
    const s = `${"a".repeat(n)}!`;
    let best = Infinity;
    for (let k = 0; k < 3; k++) {
      const t0 = performance.now();
      re.test(s);
      best = Math.min(best, performance.now() - t0);
    }
    return best;
  };
  time(50_000); // warm up
  const small = time(200_000);
  const large = time(800_000);
  // 4x the input: linear ≈ 4x, quadratic ≈ 16x; allow noise.
  assert.ok(large / small < 10, `200k: ${small.toFixed(1)} ms, 800k: ${large.toFixed(1)} ms`);
});

test("constructs that need backtracking are refused at compile time, naming the construct", () => {
  assert.throws(() => pyRegex("(a)\\1"), /backreference/);
  assert.throws(() => pyRegex("(?P<x>a)(?P=x)"), /backreference/);
  assert.throws(() => pyRegex("a(?=b)"), /lookahead/);
  assert.throws(() => pyRegex("(?<=a)b"), /lookbehind/);
  assert.throws(() => pyRegex("(?>a)"), /atomic/);
  assert.throws(() => pyRegex("a++"), /possessive/);
  assert.throws(() => pyRegex("a{1001}"), /counted repetition above 1000/);
  assert.throws(() => pyRegex("((a{1000}){1000})"), /too large/);
  assert.throws(() => pyRegex("a".repeat(REGEX_LIMITS.maxSourceChars + 1)), PyRegexError);
  assert.throws(() => pyRegex("(".repeat(200) + ")".repeat(200)), /nested more than 100/);
});

test("Python semantics over code points: \\d \\w \\s are Unicode, . takes one astral character", () => {
  assert.ok(pyRegex("\\d+$").test("٣٤")); // Arabic-Indic digits are \d in Python 3
  assert.ok(pyRegex("\\w+$").test("héllo_1"));
  assert.ok(pyRegex("a\\sb").test("a\u3000b"));
  assert.ok(!pyRegex("a\\sb").test("a\ufeffb"));
  assert.ok(pyRegex("^.$").test("😀"));
  assert.ok(pyRegex("[😀-😂]").test("😁"));
  assert.ok(pyRegex("\\bword\\b").test("word here"));
  assert.equal(pyRegex("(a)|b").match("b")?.[1], undefined);
  assert.equal(pyRegex("(?P<n>x)").match("x")?.groups.n, "x");
  assert.equal(Object.getPrototypeOf(pyRegex("(?P<constructor>x)").match("x")?.groups), null);
});

// ---- differential: random patterns over {a, b} against JavaScript's backtracking RegExp ----

const atom: fc.Arbitrary<string> = fc.constantFrom("a", "b", ".", "[ab]", "[^a]", "(?:)", "\\w");
const quant = fc.constantFrom("", "", "*", "+", "?", "*?", "+?", "??", "{2}", "{1,3}", "{0,2}?", "{2,}");
const pattern: fc.Arbitrary<string> = fc.letrec<{ re: string; seq: string; item: string }>((tie) => ({
  re: fc.oneof({ depthSize: "small" }, tie("seq"), fc.tuple(tie("seq"), tie("seq")).map(([x, y]) => `${x}|${y}`)),
  seq: fc.array(tie("item"), { minLength: 1, maxLength: 3 }).map((xs) => xs.join("")),
  item: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.tuple(atom, quant).map(([a, q]) => (a === "(?:)" && q !== "" ? a : a + q)),
    fc.tuple(tie("re"), quant).map(([r, q]) => `(${r})${q}`),
  ),
})).re;

/** Whether a group body can match empty (JavaScript and Python differ on captures of empty iterations). */
const hasNullableLoop = (p: string): boolean => /\((?:[^()]*)\)[*+{]/.test(p) || p.includes("(?:)");

test("agrees with a backtracking engine on random patterns and texts", { timeout: 120_000 }, () => {
  fc.assert(
    fc.property(pattern, fc.stringMatching(/^[ab]{0,10}$/), (p, text) => {
      const js = new RegExp(`^(?:${p})`).exec(text);
      const ours = pyRegex(p).match(text);
      assert.equal(ours !== null, js !== null, `${p} on ${JSON.stringify(text)}`);
      if (js && ours && !hasNullableLoop(p)) {
        assert.equal(ours[0], js[0], `${p} on ${JSON.stringify(text)}: whole match`);
        for (let g = 1; g < js.length; g++) assert.equal(ours[g], js[g], `${p} on ${JSON.stringify(text)}: group ${g}`);
      }
    }),
    { numRuns: 300 },
  );
});
