/**
 * The task regex engine runs in linear time: the classic catastrophic patterns finish on long lines (a backtracking
 * engine takes longer than the age of the universe on them), and on random patterns it agrees with a backtracking
 * engine (JavaScript's RegExp, same leftmost-first semantics) wherever that one is fast.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { pyRegex, PyRegexError } from "../src/index.ts";
import { REGEX_LIMITS } from "@farm/task/testing";
import { compile } from "../src/regex/engine.ts";
import { parsePython } from "../src/regex/parse.ts";

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

// ---- differential: random patterns over {a, b} against Python's own `re` (the semantics task files are written for) ----

const atom: fc.Arbitrary<string> = fc.constantFrom("a", "b", ".", "[ab]", "[^a]", "(?:)", "\\w", "\\b", "$");
const quant = fc.constantFrom("", "", "*", "+", "?", "*?", "+?", "??", "{2}", "{1,3}", "{0,2}?", "{2,}");
const pattern: fc.Arbitrary<string> = fc.letrec<{ re: string; seq: string; item: string }>((tie) => ({
  re: fc.oneof({ depthSize: "small" }, tie("seq"), fc.tuple(tie("seq"), tie("seq")).map(([x, y]) => `${x}|${y}`)),
  seq: fc.array(tie("item"), { minLength: 1, maxLength: 3 }).map((xs) => xs.join("")),
  item: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.tuple(atom, quant).map(([a, q]) => (a === "(?:)" || a === "\\b" || a === "$" ? a : a + q)),
    fc.tuple(tie("re"), quant).map(([r, q]) => `(${r})${q}`),
  ),
})).re;

/** Python's re.match for each case: [group 0, groups…] or null. */
function pythonMatches(cases: [string, string][]): ((string | null)[] | null)[] {
  const script = "import json,re,sys\nout=[]\nfor p,t in json.load(sys.stdin):\n  m=re.match(p,t)\n  out.append(None if m is None else [m.group(0)]+list(m.groups()))\nprint(json.dumps(out))";
  return JSON.parse(execFileSync("python3", ["-c", script], { input: JSON.stringify(cases), maxBuffer: 64 << 20 }).toString());
}

const hasPython = (() => {
  try {
    execFileSync("python3", ["-c", "import re"]);
    return true;
  } catch {
    return false;
  }
})();

test("agrees with Python's re on random patterns and texts (match, whole match and every group)", { timeout: 120_000, skip: hasPython ? false : "python3 not installed" }, () => {
  const cases = fc.sample(fc.tuple(pattern, fc.stringMatching(/^[ab]{0,10}$/)), { numRuns: 600, seed: 12345 });
  const expected = pythonMatches(cases);
  const mismatches: string[] = [];
  let groupsCompared = 0;
  cases.forEach(([p, text], k) => {
    const m = pyRegex(p).match(text);
    const py = expected[k] ?? null;
    const ours = m === null ? null : Array.from({ length: (py ?? []).length }, (_, g) => m[g] ?? null);
    const what = `${p} on ${JSON.stringify(text)}: ours ${JSON.stringify(ours)}, Python ${JSON.stringify(py)}`;
    // Success and the whole match always agree; the groups too unless a loop body can match empty (engine.ts).
    if ((ours === null) !== (py === null) || (ours && py && ours[0] !== py[0])) mismatches.push(what);
    else if (compile(parsePython(p)).nullableLoops === 0) {
      groupsCompared++;
      if (JSON.stringify(ours) !== JSON.stringify(py)) mismatches.push(what);
    }
  });
  assert.deepEqual(mismatches.slice(0, 10), [], `${mismatches.length} of ${cases.length} differ`);
  assert.ok(groupsCompared > cases.length / 4, `groups compared in only ${groupsCompared} cases`);
});
