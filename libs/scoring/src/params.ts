/**
 * An episode's parameters (FAMILIES.md "Parameters"): fixed ones as the campaign gave them, the rest drawn in
 * declaration order from the episode's seed, so episode i gets the same values on every retry and every host.
 *
 * Each parameter draws from its own stream, keyed by the episode's seed and the parameter's name: fixing one
 * parameter, or adding another, leaves the values of the others as they were. The streams are
 * `@farm/seeded-random`'s generator (our own code, no library version in between) and every computation on them is
 * exact integer or IEEE arithmetic, so two hosts draw the same values.
 */
import { seededRandomStream, type SeededRandom } from "@farm/seeded-random";
import { FAMILY_LIMITS, PARAM_NAME_PATTERN, type ParamDecl, type ParamSpec, type ParamValue, type TaskParams } from "@farm/task";
import { ScoringError } from "./errors.ts";
import { paramText, renderText } from "./render.ts";
import { WORDS } from "./words.ts";

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const DAY_MS = 86_400_000;
/** Control characters but tab and newline, and bidi overrides: never in a parameter value. */
const BAD_CHARS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

export function drawParams(decls: readonly ParamDecl[], key: { seed: number; fixed?: TaskParams }): TaskParams {
  const problem = key.fixed ? fixedParamsProblem(decls, key.fixed) : undefined;
  if (problem) throw new ScoringError("bad_param", `fixed params: ${problem}`);
  const out: Record<string, ParamValue> = Object.create(null);
  for (const d of decls) {
    const fixed = key.fixed && Object.hasOwn(key.fixed, d.name) ? key.fixed[d.name] : undefined;
    out[d.name] = fixed !== undefined ? fixed : drawOne(d, streamFor(key.seed, d.name), out);
  }
  return Object.freeze(out);
}

/**
 * Why `fixed` (a campaign's `params` for one episode) does not fit the declarations, or undefined: an unknown
 * name, a value of the wrong type (an `int` must be an integer in its range, a `choice` one of its items, `words`,
 * `text` and `date` text), an unbounded text. `map`, `const` and `format` take any scalar.
 */
export function fixedParamsProblem(decls: readonly ParamDecl[], fixed: TaskParams): string | undefined {
  const names = Object.keys(fixed);
  if (names.length > FAMILY_LIMITS.maxParams) return `${names.length} parameters; at most ${FAMILY_LIMITS.maxParams}`;
  for (const name of names) {
    const shown = JSON.stringify(name.slice(0, 64));
    if (!PARAM_NAME_PATTERN.test(name)) return `${shown} is not a parameter name (lower case letters, digits and _, starting with a letter)`;
    const d = decls.find((x) => x.name === name);
    if (!d) return `${shown} is not a parameter of this family (${decls.length ? `its parameters: ${decls.map((x) => x.name).join(", ")}` : "it has none"})`;
    const problem = valueProblem(d.spec, fixed[name]);
    if (problem) return `${name}: ${problem}`;
  }
  return undefined;
}

/** Why `v` cannot be the value of a parameter declared as `spec`, or undefined. */
function valueProblem(spec: ParamSpec, v: unknown): string | undefined {
  if (typeof v !== "string" && typeof v !== "boolean" && !(typeof v === "number" && Number.isFinite(v))) return "must be a string, a finite number or a boolean";
  if (typeof v === "string" && v.length > FAMILY_LIMITS.maxParamValueChars) return `${v.length} characters; at most ${FAMILY_LIMITS.maxParamValueChars}`;
  if (typeof v === "string" && BAD_CHARS.test(v)) return "no control characters (tab and newline are fine)";
  switch (spec.kind) {
    case "choice":
      return spec.values.some((c) => c === v) ? undefined : `must be one of ${spec.values.slice(0, 10).map((c) => JSON.stringify(c)).join(", ")}${spec.values.length > 10 ? ", ..." : ""}`;
    case "int":
      return typeof v === "number" && Number.isInteger(v) && v >= spec.min && v <= spec.max ? undefined : `must be an integer ${spec.min} … ${spec.max}`;
    case "number":
      return typeof v === "number" && v >= spec.min && v <= spec.max ? undefined : `must be a number ${spec.min} … ${spec.max}`;
    case "words":
    case "text":
    case "date":
      return typeof v === "string" ? undefined : `must be text (a ${spec.kind} parameter)`;
    default:
      return undefined;
  }
}

/** The parameter's own stream: the episode's seed and the parameter's name. */
function streamFor(seed: number, name: string): SeededRandom {
  return seededRandomStream(seed, name);
}

/** Uniform in [0, 1) with 53 bits (two 32-bit draws), so ranges up to 2^53 are drawn evenly. */
function uniform(rng: SeededRandom): number {
  const hi = Math.floor(rng.next() * 2 ** 32);
  const lo = Math.floor(rng.next() * 2 ** 32) >>> 11;
  return (hi * 2 ** 21 + lo) / 2 ** 53;
}

/** Uniform integer in [min, max]. */
function intIn(rng: SeededRandom, min: number, max: number): number {
  return Math.min(max, min + Math.floor(uniform(rng) * (max - min + 1)));
}

function drawOne(d: ParamDecl, rng: SeededRandom, earlier: Readonly<Record<string, ParamValue>>): ParamValue {
  const s = d.spec;
  switch (s.kind) {
    case "const":
      return s.value;
    case "choice":
      return s.values[intIn(rng, 0, s.values.length - 1)]!;
    case "int":
      return intIn(rng, s.min, s.max);
    case "number": {
      const v = Number((s.min + uniform(rng) * (s.max - s.min)).toFixed(s.decimals));
      return Math.min(s.max, Math.max(s.min, v));
    }
    case "words": {
      // Distinct words (a partial Fisher-Yates shuffle of the list's indexes).
      const n = intIn(rng, s.min, Math.min(s.max, WORDS.length));
      const idx = WORDS.map((_, i) => i);
      for (let i = 0; i < n; i++) {
        const j = intIn(rng, i, idx.length - 1);
        [idx[i], idx[j]] = [idx[j]!, idx[i]!];
      }
      return idx.slice(0, n).map((i) => WORDS[i]).join(" ");
    }
    case "text": {
      const alphabet = [...s.alphabet];
      let out = "";
      for (let i = 0; i < s.length; i++) out += alphabet[intIn(rng, 0, alphabet.length - 1)];
      return out;
    }
    case "date": {
      const from = Date.parse(`${s.from}T00:00:00Z`);
      const days = Math.round((Date.parse(`${s.to}T00:00:00Z`) - from) / DAY_MS);
      return strftime(new Date(from + intIn(rng, 0, days) * DAY_MS), s.format);
    }
    case "map": {
      if (!Object.hasOwn(earlier, s.param)) throw new ScoringError("bad_param", `line ${d.line}: parameter ${d.name}: map of ${s.param}, which has no value yet`);
      const k = paramText(earlier[s.param]!);
      const v = s.values.get(k);
      if (v === undefined) throw new ScoringError("bad_param", `line ${d.line}: parameter ${d.name}: the map has no value for ${JSON.stringify(k.slice(0, 64))} (the value of ${s.param}); add it to values`);
      return v;
    }
    case "format": {
      const v = renderText(s.template, earlier);
      if (v.length > FAMILY_LIMITS.maxParamValueChars) throw new ScoringError("bad_param", `line ${d.line}: parameter ${d.name}: the formatted value has ${v.length} characters; at most ${FAMILY_LIMITS.maxParamValueChars}`);
      return v;
    }
  }
}

const pad = (n: number, w: number, c = "0"): string => String(n).padStart(w, c);

/** The strftime subset of FAMILIES.md, in UTC (a day has no time zone): %Y %m %d %e %B %b %A %a %%. */
export function strftime(date: Date, format: string): string {
  return format.replace(/%(.)/g, (whole, c: string) => {
    switch (c) {
      case "Y":
        return pad(date.getUTCFullYear(), 4);
      case "m":
        return pad(date.getUTCMonth() + 1, 2);
      case "d":
        return pad(date.getUTCDate(), 2);
      case "e":
        return pad(date.getUTCDate(), 2, " ");
      case "B":
        return MONTHS[date.getUTCMonth()]!;
      case "b":
        return MONTHS[date.getUTCMonth()]!.slice(0, 3);
      case "A":
        return WEEKDAYS[date.getUTCDay()]!;
      case "a":
        return WEEKDAYS[date.getUTCDay()]!.slice(0, 3);
      case "%":
        return "%";
      default:
        return whole;
    }
  });
}
