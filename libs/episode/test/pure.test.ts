import { test } from "node:test";
import assert from "node:assert/strict";
import { parsePyFloat, parsePyLiteral } from "../src/py-literal.ts";
import { LogParser } from "../src/log-parser.ts";
import { ExtrasBuffer, checkExtra, shapeOf } from "../src/extras.ts";
import { LogAccumulator } from "../src/log-accumulator.ts";
import { compileEpisodeConfig } from "../src/config.ts";
import { toPixel } from "../src/action.ts";
import type { ArraySpec } from "@farm/task";
import { canonicalLogParsing, py } from "./helpers.ts";

test("Python literals: numbers, strings, constants, lists, tuples, dicts, nesting", () => {
  const ok = (s: string) => {
    const r = parsePyLiteral(s);
    assert.ok(r.ok, `${s}: ${!r.ok ? r.error : ""}`);
    return r.value;
  };
  assert.equal(ok("42"), 42);
  assert.equal(ok("-3.5"), -3.5);
  assert.equal(ok("1e3"), 1000);
  assert.equal(ok(".5"), 0.5);
  assert.equal(ok("1_000"), 1000);
  assert.equal(ok("0x1f"), 31);
  assert.equal(ok("'a b'"), "a b");
  assert.equal(ok('"it\\"s"'), 'it"s');
  assert.equal(ok("'ab' 'cd'"), "abcd");
  assert.equal(ok("'\\n\\x41'"), "\nA");
  assert.equal(ok("True"), true);
  assert.equal(ok("False"), false);
  assert.equal(ok("None"), null);
  assert.deepEqual(ok("[1, 2, 3]"), [1, 2, 3]);
  assert.deepEqual(ok("[[0, 2], [4, 0],]"), [[0, 2], [4, 0]]);
  assert.deepEqual(ok("(1, 'x')"), [1, "x"]);
  assert.deepEqual(ok("(1,)"), [1]);
  assert.equal(ok("(7)"), 7);
  assert.deepEqual(ok("()"), []);
  assert.deepEqual({ ...(ok("{'a': [1, 2], 'b': None}") as object) }, { a: [1, 2], b: null }); // a null-prototype dict
  assert.equal(Object.getPrototypeOf(ok("{'__proto__': 1}")), null);
  assert.deepEqual(ok("{1, 2}"), [1, 2]);
  assert.deepEqual(ok("[['.', 'x'], ['o', '.']]"), [[".", "x"], ["o", "."]]);
  // Empty value = flag 1.
  assert.equal(ok(""), 1);
  assert.equal(ok("   "), 1);
});

test("Python literals: anything else is a counted error, never a throw", () => {
  for (const bad of ["[1, 2", "'open", "foo", "1 2", "inf", "[1,,2]", "{'a' 1}", "true", "1j", "{[1]: 2}"]) {
    const r = parsePyLiteral(bad);
    assert.equal(r.ok, false, bad);
  }
});

test("Python float: what the canonical number group captures", () => {
  assert.equal(parsePyFloat("1."), 1);
  assert.equal(parsePyFloat("-.25"), -0.25);
  assert.equal(parsePyFloat("+3"), 3);
  assert.equal(parsePyFloat(""), undefined);
  assert.equal(parsePyFloat("."), undefined);
  assert.equal(parsePyFloat("-"), undefined);
  assert.equal(parsePyFloat("inf"), Infinity);
});

test("log parser: canonical regexes — score deltas, rewards, episode end, extras, json_extra", () => {
  const p = new LogParser(canonicalLogParsing());
  assert.deepEqual(p.parse({ message: "score: 4" }), [{ kind: "score", score: 4, reward: 4 }]);
  assert.deepEqual(p.parse({ message: "Score: 12" }), [{ kind: "score", score: 12, reward: 8 }]);
  assert.deepEqual(p.parse({ message: "reward: -0.5" }), [{ kind: "reward", reward: -0.5, source: "reward" }]);
  assert.deepEqual(p.parse({ message: "Reward: 1." }), [{ kind: "reward", reward: 1, source: "reward" }]);
  assert.deepEqual(p.parse({ message: "episode end" }), [{ kind: "episode_end" }]);
  assert.deepEqual(p.parse({ message: "episode_end" }), [{ kind: "episode_end" }]);
  assert.deepEqual(p.parse({ message: "episode ended" }), []);
  assert.deepEqual(p.parse({ message: "extra: grid [[0, 2], [4, 0]]" }), [{ kind: "extra", name: "grid", value: [[0, 2], [4, 0]], source: "extra" }]);
  assert.deepEqual(p.parse({ message: "extra: clicked" }), [{ kind: "extra", name: "clicked", value: 1, source: "extra" }]);
  assert.deepEqual(p.parse({ message: 'json_extra: {"opened": 3, "who": "x"}' }), [
    { kind: "extra", name: "opened", value: 3, source: "json_extra" },
    { kind: "extra", name: "who", value: "x", source: "json_extra" },
  ]);
  // Start-anchored like re.match, not end-anchored unless the pattern says so.
  assert.deepEqual(p.parse({ message: "the score: 4" }), []);
  assert.deepEqual(p.parse({ message: "reward: 1e-3" }), [], "no exponent in the canonical number pattern");
  // A trailing CR/LF is stripped first.
  assert.deepEqual(p.parse({ message: "reward: 2\r\n" }), [{ kind: "reward", reward: 2, source: "reward" }]);
  p.reset();
  assert.deepEqual(p.parse({ message: "score: 4" }), [{ kind: "score", score: 4, reward: 4 }], "score restarts at 0 after reset");
});

test("log parser: malformed payloads are reported, not thrown (the upstream listener crashes)", () => {
  const p = new LogParser(canonicalLogParsing());
  const kinds = (m: string) => p.parse({ message: m }).map((e) => (e.kind === "malformed" ? `malformed:${e.what}` : e.kind));
  assert.deepEqual(kinds("reward: "), ["malformed:reward"]);
  assert.deepEqual(kinds("score: ."), ["malformed:score"]);
  assert.deepEqual(kinds("extra: grid [[1, 2]"), ["malformed:extra"]);
  assert.deepEqual(kinds("json_extra: 5"), ["malformed:json_extra"]);
  assert.deepEqual(kinds("json_extra: [1, 2]"), ["malformed:json_extra"]);
  assert.deepEqual(kinds("json_extra: {not json"), ["malformed:json_extra"]);
});

test("log parser: every listener fires; reward_event adds a constant; empty regexes never match", () => {
  const p = new LogParser(
    canonicalLogParsing({
      // An empty source with a match-all regex: the parser itself must treat it as never matching (upstream `a^`).
      reward: [py("^[Rr]eward: ([-+]?[0-9]*\\.?[0-9]*)$"), { source: "", match: () => ({ 0: "", groups: {} }), test: () => true }],
      extra: [py("^extra: (?P<name>[^ ]*)[ ]?(?P<extra>.*)$"), py("^(?P<name>reward): (?P<extra>.*)$")],
      rewardEvent: [{ event: py("^reward: "), reward: 10 }, { event: py("^bonus$"), reward: 0.25 }],
    }),
  );
  const evs = p.parse({ message: "reward: 1" });
  assert.deepEqual(evs, [
    { kind: "reward", reward: 1, source: "reward" },
    { kind: "extra", name: "reward", value: 1, source: "extra" },
    { kind: "reward", reward: 10, source: "reward_event" },
  ]);
  assert.deepEqual(p.parse({ message: "bonus" }), [{ kind: "reward", reward: 0.25, source: "reward_event" }]);
});

test("log parser: dialect (b) message prefix is required and stripped", () => {
  const p = new LogParser(canonicalLogParsing({ messagePrefix: py("AndroidRLTask:") }));
  assert.deepEqual(p.parse({ message: "AndroidRLTask: reward: 2" }), [{ kind: "reward", reward: 2, source: "reward" }]);
  assert.deepEqual(p.parse({ message: "  AndroidRLTask: episode end" }), [{ kind: "episode_end" }]);
  assert.deepEqual(p.parse({ message: "reward: 2" }), [], "lines without the prefix are dropped");
});

const spec = (name: string, shape: number[], dtype: ArraySpec["dtype"]): ArraySpec => ({ name, shape, dtype });
const specs = new Map([
  ["grid", spec("grid", [4, 4], "INT32")],
  ["direction", spec("direction", [1], "INT32")],
  ["ball", spec("ball", [2], "INT32")],
  ["flag", spec("flag", [1], "BOOL")],
  ["card", spec("card", [2], "STRING_U1")],
  ["u8", spec("u8", [1], "UINT8")],
  ["pos", spec("pos", [2], "FLOAT")],
  ["any", spec("any", [], "OBJECT")],
]);

test("extras_spec: right shape and dtype pass with the spec's shape", () => {
  const g = [[0, 2, 0, 0], [0, 0, 0, 0], [4, 0, 0, 0], [0, 0, 0, 2]];
  const r = checkExtra("grid", g, specs);
  assert.ok(r.ok && r.declared);
  assert.deepEqual(r.ok && r.extra, { name: "grid", dtype: "INT32", shape: [4, 4], value: g });
  const d = checkExtra("direction", 3, specs);
  assert.deepEqual(d.ok && d.extra, { name: "direction", dtype: "INT32", shape: [1], value: [3] }, "scalar accepted for shape [1]");
  assert.ok(checkExtra("card", ["A", "s"], specs).ok);
  assert.ok(checkExtra("pos", [1, 2.5], specs).ok);
  assert.ok(checkExtra("flag", [true], specs).ok);
  assert.ok(checkExtra("any", { a: [1, [2]] }, specs).ok);
});

test("extras_spec: wrong shape, dtype or a ragged list is dropped with a reason", () => {
  const reason = (n: string, v: unknown) => {
    const r = checkExtra(n, v, specs);
    return r.ok ? "ok" : r.reason;
  };
  assert.equal(reason("grid", [[1, 2], [3, 4]]), "shape");
  assert.equal(reason("grid", [[1, 2], [3]]), "ragged");
  assert.equal(reason("ball", [1.5, 2]), "dtype");
  assert.equal(reason("ball", ["1", 2]), "dtype");
  assert.equal(reason("ball", [1, 2, 3]), "shape");
  assert.equal(reason("u8", [256]), "dtype");
  assert.equal(reason("u8", [-1]), "dtype");
  assert.equal(reason("card", ["AB", "c"]), "dtype");
  assert.equal(reason("flag", ["yes"]), "dtype");
  assert.equal(reason("direction", [[1]]), "shape");
});

test("extras: undeclared names are kept with an inferred dtype", () => {
  const r = checkExtra("lives", [3], specs);
  assert.deepEqual(r.ok && r, { ok: true, declared: false, extra: { name: "lives", dtype: "INT64", shape: [1], value: [3] } });
  const f = checkExtra("speed", 0.5, new Map());
  assert.deepEqual(f.ok && f.extra, { name: "speed", dtype: "DOUBLE", shape: [], value: 0.5 });
  assert.deepEqual(shapeOf([[1, 2, 3], [4, 5, 6]]), [2, 3]);
  assert.deepEqual(shapeOf([]), [0]);
  assert.equal(shapeOf([1, [2]]), undefined);
});

test("extras buffer: per name, in order, capped at 100 with the oldest dropped, cleared by take", () => {
  const b = new ExtrasBuffer(100);
  for (let i = 0; i < 105; i++) b.add({ name: "a", dtype: "INT64", shape: [], value: i });
  b.add({ name: "b", dtype: "INT64", shape: [], value: -1 });
  const t = b.take();
  assert.equal(t.length, 101);
  assert.equal(t[0]!.value, 5);
  assert.equal(t[99]!.value, 104);
  assert.equal(t[100]!.name, "b");
  assert.equal(b.overflowed, 5);
  assert.deepEqual(b.take(), []);
});

test("log accumulator: paused lines are discarded but seen by waiters; drops and malformed lines are counted", async () => {
  const dropped: string[] = [];
  const malformed: string[] = [];
  const acc = new LogAccumulator(canonicalLogParsing(), [spec("ball", [2], "INT32")], 100, {
    onMalformed: (w) => malformed.push(w),
    onExtraDropped: (n, r) => dropped.push(`${n}:${r}`),
  });
  const w = acc.listenForMessage(py("^ready$"));
  acc.onRecord({ message: "reward: 5" });
  acc.onRecord({ message: "ready" });
  assert.equal(await w.wait(10), true);
  w.dispose();
  acc.resumeFresh();
  acc.onRecord({ message: "score: 8" });
  acc.onRecord({ message: "reward: 1" });
  acc.onRecord({ message: "extra: ball [1, 2]" });
  acc.onRecord({ message: "extra: ball [1, 2, 3]" });
  acc.onRecord({ message: "score: ." });
  acc.onRecord({ message: "episode end" });
  const t = acc.take();
  assert.equal(t.reward, 9);
  assert.deepEqual(t.extras, [{ name: "ball", dtype: "INT32", shape: [2], value: [1, 2] }]);
  assert.equal(acc.episodeEnd, true);
  assert.equal(acc.lastScore, 8);
  assert.deepEqual(dropped, ["ball:shape"]);
  assert.deepEqual(malformed, ["score"]);
  assert.equal(acc.counters.extras_dropped, 1);
  assert.equal(acc.counters.log_malformed, 1);
  assert.deepEqual(acc.take(), { reward: 0, extras: [] }, "take zeroes");
  const w2 = acc.listenForMessage(py("^never$"));
  assert.equal(await w2.wait(20), false);
  w2.dispose();
});

test("config: defaults, units, validation", () => {
  const c = compileEpisodeConfig();
  assert.equal(c.settleMs, 500);
  assert.equal(c.appScreenCheckEverySteps, 150);
  assert.equal(c.maxRecoveries, 3);
  assert.equal(compileEpisodeConfig({ settleMs: 10 }).settleMs, 10);
  assert.throws(() => compileEpisodeConfig({ stepTimeoutMs: 0 }), RangeError);
  assert.throws(() => compileEpisodeConfig({ settleMs: -1 }), RangeError);
  assert.throws(() => compileEpisodeConfig({ bogus: 1 } as never), /unknown/);
});

test("action mapping: pixel = (min(int(x·W), W−1), min(int(y·H), H−1))", () => {
  const s = { width: 1080, height: 1920 };
  assert.deepEqual(toPixel([0, 0], s), [0, 0]);
  assert.deepEqual(toPixel([1, 1], s), [1079, 1919]);
  assert.deepEqual(toPixel([0.5, 0.25], s), [540, 480]);
  assert.deepEqual(toPixel([0.99999, 0.1], s), [1079, 192]);
});
