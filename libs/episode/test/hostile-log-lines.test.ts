/**
 * Hostile log lines: names that are properties of Object.prototype, numbers beyond float range, megabyte lines,
 * deep nesting, catastrophic task regexes. Every case ends in a counted `malformed` event or ordinary data;
 * nothing throws, blocks the event loop, pollutes a prototype or reaches a trajectory as a non-finite number.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { pyRegex, type ArraySpec } from "@farm/task";
import { LogAccumulator } from "../src/log-accumulator.ts";
import { extrasByName } from "../src/extras.ts";
import { LOG_LIMITS, badExtraValue } from "../src/log-bounds.ts";
import { assertCommittable, resultProblems } from "../src/result-check.ts";
import { EpisodeError } from "../src/errors.ts";
import type { EpisodeTrajectory } from "../src/trajectory-types.ts";
import { canonicalLogParsing } from "./helpers.ts";

const PROTO_NAMES = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "isPrototypeOf", "__defineGetter__", "prototype"];

function accumulator(specs: ArraySpec[] = [], cfg = canonicalLogParsing()) {
  const malformed: string[] = [];
  const dropped: string[] = [];
  const acc = new LogAccumulator(cfg, specs, 100, { onMalformed: (w, d) => malformed.push(`${w}: ${d}`), onExtraDropped: (n, r) => dropped.push(`${n}: ${r}`) });
  acc.resumeFresh();
  const feed = (...lines: string[]) => {
    for (const message of lines) acc.onRecord({ message });
  };
  return { acc, feed, malformed, dropped };
}

/** Every observable piece of the step is sane: finite reward, own-property names, bounded values. */
function assertSane(acc: LogAccumulator): void {
  const { reward, extras } = acc.take();
  assert.ok(Number.isFinite(reward), `reward ${reward}`);
  for (const e of extras) assert.equal(badExtraValue(e.value), undefined, e.name);
  const byName = extrasByName(extras);
  for (const e of extras) assert.ok(Object.hasOwn(byName, e.name), e.name);
  assert.equal(({} as Record<string, unknown>).polluted, undefined, "Object.prototype polluted");
  for (const v of Object.values(acc.counters)) assert.ok(Number.isFinite(v));
}

test("extra names that are Object.prototype properties are ordinary names", () => {
  const { acc, feed, malformed } = accumulator();
  feed(...PROTO_NAMES.map((n, i) => `extra: ${n} [${i}]`));
  feed(`json_extra: ${JSON.stringify(Object.fromEntries(PROTO_NAMES.map((n) => [n, 1])))}`.replace('"__proto__"', '"__proto__"'));
  feed('json_extra: {"__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 2}}}');
  feed("extra: toString {'__proto__': {'polluted': 3}, 'constructor': 4}");
  assert.deepEqual(malformed, []);
  const { extras } = acc.take();
  const byName = extrasByName(extras);
  for (const n of PROTO_NAMES) assert.ok(Array.isArray(byName[n]) && byName[n]!.length >= 1, n);
  assert.deepEqual(byName["constructor"]?.[0]?.value, [0]);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(Object.getPrototypeOf(byName), null);
});

test("a reward with 400 digits (or inf, nan, 1e309) is malformed, never Infinity", () => {
  const { acc, feed, malformed } = accumulator();
  feed(`reward: ${"9".repeat(400)}`, "reward: 1e309", `score: ${"1".repeat(400)}`, "reward: 1", `reward: 1${"0".repeat(16)}`);
  const cfg = canonicalLogParsing({ reward: [pyRegex("^reward: (.*)$")] });
  const b = accumulator([], cfg);
  b.feed("reward: inf", "reward: -inf", "reward: nan", "reward: NaN", "reward: 1e999", "reward: 2");
  assert.equal(acc.take().reward, 1);
  assert.equal(b.acc.take().reward, 2);
  assert.equal(malformed.length, 3, malformed.join("\n")); // "1e309" does not match the canonical regex (no exponent)
  assert.equal(b.malformed.length, 5, b.malformed.join("\n"));
  assert.ok(malformed.every((m) => m.length < 600), "details are excerpts");
  assert.equal(acc.counters.log_malformed_reward, 2);
  assert.equal(acc.counters.log_malformed_score, 1);
});

test("long lines, deep values and many names are bounded", { timeout: 30_000 }, () => {
  const { acc, feed, malformed } = accumulator();
  const t0 = performance.now();
  feed(`extra: big [${"1, ".repeat(500_000)}1]`); // 1.5 MB
  feed(`reward: ${"1".repeat(2_000_000)}`);
  feed(`extra: deep ${"[".repeat(5_000)}${"]".repeat(5_000)}`);
  feed(`json_extra: {"deep": ${"[".repeat(5_000)}${"]".repeat(5_000)}}`);
  feed(`extra: tuples ${"(".repeat(30)}1${",)".repeat(30)}`); // nested tuples: linear, not 2^30
  feed(`extra: many [${"0, ".repeat(LOG_LIMITS.maxValueElements)}0]`); // more elements than fit in a line
  feed('json_extra: {"x": 1e400}');
  feed("extra: float 1e400");
  for (let i = 0; i < 400; i++) feed(`extra: name${i} ${i}`);
  assert.ok(performance.now() - t0 < 20_000);
  assert.equal(acc.counters.log_line_too_long, 3);
  assert.ok(malformed.length >= 7, malformed.join("\n"));
  const { extras } = acc.take();
  assert.equal(new Set(extras.map((e) => e.name)).size, LOG_LIMITS.maxExtraNamesPerStep); // "tuples" and the first 255 others
  assert.ok(extras.some((e) => e.name === "tuples"));
  assert.ok(malformed.every((m) => m.length < 600));
});

test("control characters in extra names are refused; in values they are data", () => {
  const { acc, feed, malformed } = accumulator();
  feed("extra: a\u0007b [1]", "extra: \u202egrid [1]", `extra: ${"n".repeat(200)} [1]`, "extra: s '\\x1b[31m'");
  assert.equal(malformed.length, 3);
  assert.ok(malformed.every((m) => !/[\u0000-\u001f\u202e]/.test(m)), "details are escaped");
  assert.deepEqual(acc.take().extras.map((e) => e.value), ["\u001b[31m"]);
});

test("a catastrophic task regex on a long line does not block the event loop", { timeout: 30_000 }, () => {
  const cfg = canonicalLogParsing({ reward: [pyRegex("^(a+)+$")], extra: [pyRegex("^(?P<name>(x|x)*)y (?P<extra>.*)$")], episodeEnd: [pyRegex("(.*a){20}$")] });
  const { acc, feed } = accumulator([], cfg);
  const t0 = performance.now();
  feed(`${"a".repeat(LOG_LIMITS.maxLineChars - 1)}!`, "x".repeat(LOG_LIMITS.maxLineChars), "a".repeat(LOG_LIMITS.maxLineChars));
  assert.ok(performance.now() - t0 < 10_000, `${performance.now() - t0} ms`);
  assert.equal(acc.episodeEnd, true);
});

test("a result with a non-finite number or a mis-shaped extra is not committable", () => {
  const t: EpisodeTrajectory = {
    taskId: "t", taskHash: "0".repeat(64), deviceSerial: "emulator-5554", policyName: "random", policyVersion: "1", seed: 0,
    startedAt: new Date(), endedAt: new Date(), outcome: "terminated", cause: "episode_end", causeDetail: "", totalReward: 1,
    steps: [{ index: 1, timeOffsetMs: 5, action: { actionType: "TOUCH", touchPosition: [0.5, 0.5] }, reward: 1, extras: [{ name: "g", dtype: "INT32", shape: [2], value: [1, 2] }] }],
    counters: { log_lines: 3 },
  };
  assert.deepEqual(resultProblems(t), []);
  assertCommittable(t);
  const bad = structuredClone(t);
  bad.totalReward = Infinity;
  bad.steps[0]!.reward = NaN;
  bad.steps[0]!.extras[0]!.shape = [3];
  bad.counters.x = -1;
  assert.equal(resultProblems(bad).length, 4);
  assert.throws(() => assertCommittable(bad), (e: unknown) => EpisodeError.is(e) && e.code === "invalid_result" && /totalReward/.test(e.message));
});

// ---------------------------------------------------------------- property-based

const SPECS: ArraySpec[] = [
  { name: "grid", shape: [2, 2], dtype: "INT32" },
  { name: "constructor", shape: [1], dtype: "FLOAT" },
];

test("property: arbitrary log lines never throw and leave only sane data", { timeout: 120_000 }, () => {
  const { acc, feed } = accumulator(SPECS);
  fc.assert(
    fc.property(fc.array(fc.string({ unit: "binary", maxLength: 120 }), { maxLength: 8 }), (lines) => {
      feed(...lines);
      assertSane(acc);
    }),
    { numRuns: 200 },
  );
});

const prefix = fc.constantFrom("extra: ", "json_extra: ", "reward: ", "score: ", "Reward: ", "episode end", "extra: constructor ", "extra: __proto__ ");
const literalish = fc.oneof(
  fc.string({ unit: fc.constantFrom(..."[](){}'\",:-+.0123456789eEjxnaTrueFalsNoi_ \\"), maxLength: 60 }),
  fc.json({ maxDepth: 4 }),
  fc.double().map(String),
  fc.bigInt().map(String),
  fc.constantFrom("1e400", "-1e400", "nan", "inf", "9".repeat(400), "0x" + "f".repeat(300), "[" .repeat(100)),
);

test("property: lines shaped like the canonical regexes never throw and leave only sane data", { timeout: 120_000 }, () => {
  const { acc, feed } = accumulator(SPECS);
  fc.assert(
    fc.property(fc.array(fc.tuple(prefix, literalish).map(([p, v]) => p + v), { minLength: 1, maxLength: 6 }), (lines) => {
      feed(...lines);
      assertSane(acc);
    }),
    { numRuns: 300 },
  );
});

test("property: extra names from data are ordinary map keys", { timeout: 60_000 }, () => {
  fc.assert(
    fc.property(fc.oneof(fc.constantFrom(...PROTO_NAMES), fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 20 }).filter((s) => !s.includes(" "))), fc.integer(), (name, v) => {
      const { acc, feed } = accumulator();
      feed(`extra: ${name} ${v}`, `json_extra: ${JSON.stringify({ [name]: v })}`);
      const byName = extrasByName(acc.take().extras);
      assert.deepEqual(byName[name]?.map((x) => x.value), [v, v], name);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    }),
    { numRuns: 150 },
  );
});
