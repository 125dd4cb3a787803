import assert from "node:assert/strict";
import { test } from "node:test";
import { pyRegex, PyRegexError, type PyMatch } from "../src/index.ts";

const groups = (source: string, text: string): Readonly<Record<string, string | undefined>> | undefined => pyRegex(source).match(text)?.groups;
const group1 = (source: string, text: string): string | undefined => pyRegex(source).match(text)?.[1];

test("compiled regexes match at the start only (re.match) and keep the source", () => {
  const r = pyRegex("[Ss]core: ([-+]?[0-9]*\\.?[0-9]*)$");
  assert.equal(r.source, "[Ss]core: ([-+]?[0-9]*\\.?[0-9]*)$");
  assert.ok(r.test("score: 1"));
  assert.ok(!r.test("x score: 1"));
  assert.equal(JSON.stringify({ r }), JSON.stringify({ r: r.source }));
});

test("canonical score and reward regexes", () => {
  const score = "^[Ss]core: ([-+]?[0-9]*\\.?[0-9]*)$";
  assert.equal(group1(score, "score: 128"), "128");
  assert.equal(group1(score, "Score: -1.5"), "-1.5");
  assert.equal(group1(score, "score: "), ""); // the number pattern accepts an empty string
  assert.equal(group1(score, "score: 1e-3"), undefined); // no exponent
  assert.equal(group1(score, "my score: 1"), undefined); // re.match: anchored at the start
  const reward = "^[Rr]eward: ([-+]?[0-9]*\\.?[0-9]*)$";
  assert.equal(group1(reward, "reward: -0.1"), "-0.1");
  assert.equal(group1(reward, "Reward: 1"), "1");
});

test("canonical episode_end, extra and json_extra regexes with named groups", () => {
  const end = pyRegex("^episode[ _]end$");
  assert.ok(end.test("episode end") && end.test("episode_end") && !end.test("episode ended"));
  const extra = "^extra: (?P<name>[^ ]*)[ ]?(?P<extra>.*)$";
  assert.deepEqual({ ...groups(extra, "extra: grid [[2, 0], [0, 4]]") }, { name: "grid", extra: "[[2, 0], [0, 4]]" });
  assert.deepEqual({ ...groups(extra, "extra: flag") }, { name: "flag", extra: "" });
  const internal = "^extra: (?P<name>[^ ]*) (?P<extra>.*)$"; // early-2021 form: a value is required
  assert.equal(groups(internal, "extra: flag"), undefined);
  const json = "^json_extra: (?P<json_extra>.*)$";
  assert.deepEqual({ ...groups(json, 'json_extra: {"opened": 3}') }, { json_extra: '{"opened": 3}' });
});

test("back-references are refused (they cannot be matched in linear time), naming the construct", () => {
  assert.throws(() => pyRegex("(?P<q>['\"])(?P<word>\\w+)(?P=q)"), /backreference \(\?P=name\)/);
  assert.throws(() => pyRegex("(a)\\1"), /backreference \\1/);
  assert.throws(() => pyRegex("(a)\\2"), PyRegexError);
  assert.throws(() => pyRegex("(?=a)"), /lookahead/);
  assert.throws(() => pyRegex("(?<!a)b"), /lookbehind/);
  assert.ok(pyRegex("(a)\\101").test("aA")); // a three-digit octal escape, not a reference
});

test("Python-only spellings are translated to the same meaning", () => {
  assert.ok(pyRegex("a{,2}b").test("aab")); // {,n} is {0,n} in Python, literal text in JS
  assert.ok(pyRegex("[]a]+$").test("]a]")); // a leading ] in a class is literal
  assert.ok(pyRegex("\\Aab\\Z").test("ab"));
  assert.ok(!pyRegex("ab\\Z").test("ab\n"));
  assert.ok(pyRegex("ab$").test("ab\n")); // Python's $ also matches before a final newline
  assert.ok(!pyRegex("a.b").test("a\nb"));
  assert.ok(pyRegex("a.b").test("a\rb")); // Python's . matches \r (JS's does not)
  assert.ok(pyRegex("a(?#comment)b").test("ab"));
  assert.ok(pyRegex("\\a").test("\x07"));
  assert.ok(pyRegex("\\:\\/\\_").test(":/_")); // escaped punctuation is allowed in Python
  assert.ok(pyRegex("^android.widget.FrameLayout\\{.*android\\:id\\/content\\}").test("android.widget.FrameLayout{1 android:id/content}"));
  assert.ok(pyRegex("^DecorView@.*\\[MainActivity\\]$").test("DecorView@5a1[MainActivity]"));
  assert.ok(pyRegex("^(.*?)Events: \\[Alarm\\]").test("x Events: [Alarm] [Show Tab]"));
});

test("constructs without a faithful translation are rejected", () => {
  for (const bad of ["(?i)reward", "(?i:reward)", "(?s).*", "(?x) a b", "(a)(?(1)b|c)", "(?>a)", "a*+", "a++", "(?<name>a)", "\\N{DIGIT ONE}", "\\q", "(unclosed", "[a-"]) {
    assert.throws(() => pyRegex(bad), PyRegexError, bad);
  }
  assert.throws(() => pyRegex("(?i)x"), /inline flags/);
});

test("an empty regex never matches", () => {
  const r = pyRegex("");
  assert.equal(r.source, "");
  assert.ok(!r.test("") && !r.test("anything"));
  assert.equal(r.match(""), null);
});

test("the leading-characters check before the matcher never changes an answer", () => {
  // `(?:P|\uFFFF\uFFFF)` matches what P matches but requires no leading characters, so it runs the matcher on every text.
  const patterns = ["^[Ss]core: ([-+]?[0-9]*\\.?[0-9]*)$", "extra: (?P<name>[^ ]+) (?P<value>.*)$", "a{2,3}b", "(ab){2}c", "(?:ab)+c", "x?y", "\\d\\d-(\\w+)", "^$", "é🙂.", "(a|b)c", "a*", "\\bfoo"];
  const texts = ["score: 12", "Score: -1", "scorn: 1", "extra: grid [[1]]", "extra:", "aab", "aaab", "ab", "ababc", "abc", "abababc", "y", "xy", "12-ab", "1a-ab", "", "é🙂x", "é🙂", "e🙂x", "ac", "bc", "cc", "aaa", "foo", " foo"];
  for (const p of patterns) {
    const fast = pyRegex(p);
    const plain = pyRegex(`(?:${p}|\\uFFFF\\uFFFF)`);
    for (const t of texts) {
      const seen = (m: PyMatch | null) => m && { whole: m[0], first: m[1], groups: { ...m.groups } };
      assert.deepEqual(seen(fast.match(t)), seen(plain.match(t)), `${p} on ${JSON.stringify(t)}`);
      assert.equal(fast.test(t), plain.test(t), `${p} test ${JSON.stringify(t)}`);
    }
  }
});
