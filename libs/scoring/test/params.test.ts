/** Parameter generators (FAMILIES.md "Parameters"): deterministic per episode seed, in range, evenly spread; fixed params win. */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { loadTaskFile, type ParamDecl, type ParamSpec, type TaskParams } from "@farm/task";
import { drawParams, fixedParamsProblem, renderText, ScoringError } from "../src/index.ts";
import { WORDS } from "../src/words.ts";

const EXAMPLE = fileURLToPath(new URL("../../../tasks/families/example_wifi.family.yaml", import.meta.url));
const decl = (name: string, spec: ParamSpec, line = 1): ParamDecl => ({ name, spec, line });
const t = (text: string) => ({ text, line: 9 });

const ALL: ParamDecl[] = [
  decl("c", { kind: "choice", values: ["on", "off", 3, true] }),
  decl("i", { kind: "int", min: -5, max: 5 }),
  decl("big", { kind: "int", min: 0, max: 1e15 }),
  decl("x", { kind: "number", min: 0.5, max: 2, decimals: 1 }),
  decl("w", { kind: "words", min: 2, max: 4 }),
  decl("s", { kind: "text", length: 8, alphabet: "abc€" }),
  decl("d", { kind: "date", from: "2023-10-01", to: "2023-10-31", format: "%A %e %B %Y, %a %b %d/%m %%" }),
  decl("k", { kind: "const", value: "fixed" }),
  decl("m", { kind: "map", param: "c", values: new Map<string, string | number | boolean>([["on", 1], ["off", 0], ["3", "three"], ["true", "yes"]]) }),
  decl("f", { kind: "format", template: t("{w}-{i}/{m}") }),
];

test("the same seed draws the same values; the values are a frozen null-prototype object in declaration order", () => {
  const a = drawParams(ALL, { seed: 42 });
  const b = drawParams(ALL, { seed: 42 });
  assert.deepEqual({ ...a }, { ...b });
  assert.equal(Object.getPrototypeOf(a), null);
  assert.ok(Object.isFrozen(a));
  assert.deepEqual(Object.keys(a), ALL.map((d) => d.name));
  assert.equal(a.f, `${a.w}-${a.i}/${a.m}`);
  assert.equal(a.k, "fixed");
  assert.notDeepEqual({ ...drawParams(ALL, { seed: 43 }) }, { ...a });
});

test("each value is in its range and of its kind, over many seeds", () => {
  for (let seed = 0; seed < 2000; seed++) {
    const p = drawParams(ALL, { seed: seed * 7919 });
    assert.ok(["on", "off", 3, true].includes(p.c as never));
    assert.ok(Number.isInteger(p.i) && (p.i as number) >= -5 && (p.i as number) <= 5);
    assert.ok(Number.isInteger(p.big) && (p.big as number) >= 0 && (p.big as number) <= 1e15);
    assert.ok((p.x as number) >= 0.5 && (p.x as number) <= 2 && Math.round((p.x as number) * 10) === (p.x as number) * 10);
    const words = (p.w as string).split(" ");
    assert.ok(words.length >= 2 && words.length <= 4 && words.every((w) => WORDS.includes(w)) && new Set(words).size === words.length, p.w as string);
    assert.ok([...(p.s as string)].length === 8 && [...(p.s as string)].every((ch) => "abc€".includes(ch)));
    assert.match(p.d as string, /^(Sun|Mon|Tues|Wednes|Thurs|Fri|Satur)day [ 123]\d October 2023, \w{3} Oct \d\d\/10 %$/);
  }
});

test("distribution sanity: choices, ints and dates are all drawn, each about evenly", () => {
  const counts = new Map<string, number>();
  const days = new Set<string>();
  const N = 4000;
  for (let seed = 0; seed < N; seed++) {
    const p = drawParams(ALL, { seed });
    const key = `c=${String(p.c)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    counts.set(`i=${p.i}`, (counts.get(`i=${p.i}`) ?? 0) + 1);
    days.add(p.d as string);
  }
  for (const c of ["on", "off", "3", "true"]) {
    const n = counts.get(`c=${c}`) ?? 0;
    assert.ok(n > N / 4 - 200 && n < N / 4 + 200, `choice ${c}: ${n} of ${N}`);
  }
  for (let i = -5; i <= 5; i++) {
    const n = counts.get(`i=${i}`) ?? 0;
    assert.ok(n > N / 11 - 120 && n < N / 11 + 120, `int ${i}: ${n} of ${N}`);
  }
  assert.equal(days.size, 31);
  // The big range reaches its upper half as often as its lower (53-bit draws, not 32).
  let high = 0;
  for (let seed = 0; seed < 1000; seed++) if ((drawParams([ALL[2]!], { seed }).big as number) > 5e14) high++;
  assert.ok(high > 400 && high < 600, `${high}`);
});

test("parameters draw from streams of their own: fixing or adding one leaves the others' values", () => {
  const a = drawParams(ALL, { seed: 7 });
  const fixed = drawParams(ALL, { seed: 7, fixed: Object.assign(Object.create(null), { i: 4 }) as TaskParams });
  assert.equal(fixed.i, 4);
  assert.equal(fixed.w, a.w);
  assert.equal(fixed.f, `${a.w}-4/${a.m}`);
  const more = drawParams([decl("zz", { kind: "int", min: 0, max: 9 }), ...ALL], { seed: 7 });
  assert.equal(more.w, a.w);
  assert.equal(more.d, a.d);
});

test("fixed params win and are type-checked against the declarations", () => {
  const fixed = (o: Record<string, unknown>) => Object.assign(Object.create(null), o) as TaskParams;
  const p = drawParams(ALL, { seed: 1, fixed: fixed({ c: "off", w: "my own title", k: 5, d: "any day" }) });
  assert.deepEqual([p.c, p.m, p.w, p.k, p.d], ["off", 0, "my own title", 5, "any day"]);
  const problems: [Record<string, unknown>, RegExp][] = [
    [{ c: "maybe" }, /^c: must be one of "on", "off", 3, true$/],
    [{ c: "3" }, /^c: must be one of/],
    [{ i: 6 }, /^i: must be an integer -5 … 5$/],
    [{ i: 1.5 }, /^i: must be an integer/],
    [{ x: "1" }, /^x: must be a number 0\.5 … 2$/],
    [{ w: 3 }, /^w: must be text/],
    [{ nope: 1 }, /^"nope" is not a parameter of this family \(its parameters: c, i, big/],
    [{ Bad: 1 }, /^"Bad" is not a parameter name/],
    [{ s: "x".repeat(2001) }, /^s: 2001 characters; at most 2000$/],
    [{ s: "a\u0007" }, /^s: no control characters/],
    [{ k: null }, /^k: must be a string, a finite number or a boolean$/],
    [{ k: Infinity }, /^k: must be a string, a finite number or a boolean$/],
  ];
  for (const [given, message] of problems) {
    assert.match(fixedParamsProblem(ALL, fixed(given)) ?? "(none)", message, JSON.stringify(given));
    assert.throws(() => drawParams(ALL, { seed: 1, fixed: fixed(given) }), (e) => e instanceof ScoringError && e.code === "bad_param");
  }
  assert.equal(fixedParamsProblem(ALL, fixed({ c: true, i: -5, x: 2, m: "any", f: "x" })), undefined);
});

test("a map without the value, a format beyond the value bound: clear errors naming the line and parameter", () => {
  const decls = [decl("a", { kind: "int", min: 1, max: 3 }), decl("b", { kind: "map", param: "a", values: new Map([["1", "x"]]) }, 4)];
  assert.throws(() => drawParams(decls, { seed: 0, fixed: Object.assign(Object.create(null), { a: 2 }) }), /line 4: parameter b: the map has no value for "2" \(the value of a\)/);
  const long = [decl("a", { kind: "const", value: "x".repeat(1500) }), decl("b", { kind: "format", template: t("{a}{a}") }, 6)];
  assert.throws(() => drawParams(long, { seed: 0 }), /line 6: parameter b: the formatted value has 3000 characters; at most 2000/);
});

test("the example family: its goal rendered with the drawn state, and the maps agree with it", () => {
  const family = loadTaskFile(EXAMPLE).family!;
  const seen = new Set<string>();
  for (let seed = 0; seed < 50; seed++) {
    const p = drawParams(family.params, { seed });
    seen.add(p.state as string);
    assert.equal(renderText(family.goal!, p), `Turn Wi-Fi ${p.state}.`);
    assert.equal(p.wifi_value, p.state === "on" ? "1" : "0");
    assert.equal(p.start_command, p.state === "on" ? "disable" : "enable");
  }
  assert.deepEqual([...seen].sort(), ["off", "on"]);
});

test("episode i gets the same parameters in two separate processes (as on two hosts, or on a retry)", () => {
  const script = `
    import { drawParams } from "@farm/scoring";
    import { loadTaskFile } from "@farm/task";
    const decls = JSON.parse(process.argv[1], (k, v) => (v && v.__map ? new Map(v.__map) : v));
    const family = loadTaskFile(process.argv[2]).family; // node -e: argv[1] is the first argument
    const out = [];
    for (let i = 0; i < 20; i++) out.push({ ...drawParams(decls, { seed: 1000 + i }) }, { ...drawParams(family.params, { seed: 1000 + i }) });
    process.stdout.write(JSON.stringify(out));
  `;
  const declsJson = JSON.stringify(ALL, (_k, v) => (v instanceof Map ? { __map: [...v] } : v));
  const run = () => execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, declsJson, EXAMPLE], { cwd: fileURLToPath(new URL(".", import.meta.url)), encoding: "utf8", timeout: 60_000 });
  const first = run();
  const second = run();
  assert.equal(first, second);
  const here: unknown[] = [];
  const family = loadTaskFile(EXAMPLE).family!;
  for (let i = 0; i < 20; i++) here.push({ ...drawParams(ALL, { seed: 1000 + i }) }, { ...drawParams(family.params, { seed: 1000 + i }) });
  assert.equal(first, JSON.stringify(here));
});
