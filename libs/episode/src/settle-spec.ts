/**
 * The settle policy of a campaign (issue 36), as one spec string: how a step waits for the screen to settle after
 * its action before it takes the observation. Parsed here only (`farm run`/`farm submit --settle`, the job schema,
 * the scheduler's API and the episode run all call `parseSettleSpec`).
 *
 *   none                                 take the observation at once (today's behaviour; the default)
 *   fixed:MS                             sleep MS after the action
 *   androidworld[:wait=MS,cap=MS]        AndroidWorld's M3A + env: sleep `wait` (2000), then read the element tree
 *                                        at least 500 ms apart until 3 consecutive reads are equal, `cap` (6000)
 *   events[:quiet=MS,cap=MS]             no accessibility event and no frame change for `quiet` (300), at most `cap` (6000)
 *   frames[:quiet=MS,cap=MS]             no frame change for `quiet`, at most `cap` (where no event source exists)
 */
import { FarmError } from "@farm/errors";

export const SETTLE_KINDS = ["none", "fixed", "androidworld", "events", "frames"] as const;
export type SettleKind = (typeof SETTLE_KINDS)[number];

export type SettleSpec =
  | { kind: "none" }
  | { kind: "fixed"; ms: number }
  | { kind: "androidworld"; waitMs: number; gapMs: number; reads: number; capMs: number }
  | { kind: "events" | "frames"; quietMs: number; capMs: number };

/** AndroidWorld's figures: M3A's wait_after_action_seconds, then _get_stable_state's reads. */
export const ANDROIDWORLD_DEFAULTS = { waitMs: 2000, gapMs: 500, reads: 3, capMs: 6000 } as const;
export const QUIET_DEFAULTS = { quietMs: 300, capMs: 6000 } as const;
/** Bounds: a spec's length and each number (ms). */
export const SETTLE_SPEC_MAX_CHARS = 64;
export const SETTLE_MAX_MS = 60_000;
const QUIET_MIN_MS = 20;
const CAP_MIN_MS = 100;

const USAGE = "none | fixed:MS | androidworld[:wait=MS,cap=MS] | events[:quiet=MS,cap=MS] | frames[:quiet=MS,cap=MS]";

/** A bad settle spec; the message names where it came from (`--settle`, `options.settle`, …) and what to give. */
export class SettleSpecError extends FarmError<"settle_spec"> {
  constructor(message: string) {
    super("settle_spec", message);
    this.name = "SettleSpecError";
  }
}

/** Why `text` is not a settle spec, or undefined. */
export function settleSpecProblem(text: unknown): string | undefined {
  try {
    parseSettleSpec(text, "settle");
    return undefined;
  } catch (e) {
    return e instanceof SettleSpecError ? e.message.replace(/^settle: /, "") : "invalid";
  }
}

function printable(s: string): string {
  return JSON.stringify(s.length > SETTLE_SPEC_MAX_CHARS ? `${s.slice(0, SETTLE_SPEC_MAX_CHARS)}…` : s);
}

function msValue(where: string, key: string, v: string, min: number): number {
  if (!/^\d{1,6}$/.test(v)) throw new SettleSpecError(`${where}: ${key} takes a whole number of milliseconds, got ${printable(v)} (${USAGE})`);
  const n = Number(v);
  if (n < min || n > SETTLE_MAX_MS) throw new SettleSpecError(`${where}: ${key}=${n} is out of range; ${min}..${SETTLE_MAX_MS} ms`);
  return n;
}

function settings(where: string, kind: string, rest: string | undefined, allowed: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  if (rest === undefined) return out;
  if (rest === "") throw new SettleSpecError(`${where}: nothing after '${kind}:'; give ${allowed.map((k) => `${k}=MS`).join(",")} or leave the colon out`);
  for (const part of rest.split(",")) {
    const eq = part.indexOf("=");
    const key = eq < 0 ? part : part.slice(0, eq);
    if (eq < 0 || !allowed.includes(key)) throw new SettleSpecError(`${where}: '${kind}' takes ${allowed.map((k) => `${k}=MS`).join(", ")}, got ${printable(part)}`);
    if (out.has(key)) throw new SettleSpecError(`${where}: ${key} given twice`);
    out.set(key, part.slice(eq + 1));
  }
  return out;
}

/** Parses a settle spec; throws SettleSpecError naming `where` (the flag or field) and the accepted forms. */
export function parseSettleSpec(text: unknown, where = "--settle"): SettleSpec {
  if (typeof text !== "string") throw new SettleSpecError(`${where}: a settle spec is a string: ${USAGE}`);
  if (text.length > SETTLE_SPEC_MAX_CHARS) throw new SettleSpecError(`${where}: at most ${SETTLE_SPEC_MAX_CHARS} characters, got ${text.length}`);
  const colon = text.indexOf(":");
  const kind = colon < 0 ? text : text.slice(0, colon);
  const rest = colon < 0 ? undefined : text.slice(colon + 1);
  switch (kind) {
    case "none":
      if (rest !== undefined) throw new SettleSpecError(`${where}: 'none' takes no settings, got ${printable(text)}`);
      return { kind: "none" };
    case "fixed":
      if (rest === undefined) throw new SettleSpecError(`${where}: 'fixed' needs its delay: fixed:MS (e.g. fixed:500)`);
      return { kind: "fixed", ms: msValue(where, "fixed", rest, 0) };
    case "androidworld": {
      const s = settings(where, kind, rest, ["wait", "cap"]);
      const waitMs = s.has("wait") ? msValue(where, "wait", s.get("wait")!, 0) : ANDROIDWORLD_DEFAULTS.waitMs;
      const capMs = s.has("cap") ? msValue(where, "cap", s.get("cap")!, CAP_MIN_MS) : ANDROIDWORLD_DEFAULTS.capMs;
      return { kind: "androidworld", waitMs, gapMs: ANDROIDWORLD_DEFAULTS.gapMs, reads: ANDROIDWORLD_DEFAULTS.reads, capMs };
    }
    case "events":
    case "frames": {
      const s = settings(where, kind, rest, ["quiet", "cap"]);
      const quietMs = s.has("quiet") ? msValue(where, "quiet", s.get("quiet")!, QUIET_MIN_MS) : QUIET_DEFAULTS.quietMs;
      const capMs = s.has("cap") ? msValue(where, "cap", s.get("cap")!, CAP_MIN_MS) : QUIET_DEFAULTS.capMs;
      if (quietMs > capMs) throw new SettleSpecError(`${where}: quiet=${quietMs} is longer than cap=${capMs}; the cap must be at least the quiet period`);
      return { kind, quietMs, capMs };
    }
    default:
      throw new SettleSpecError(`${where}: unknown settle policy ${printable(kind)}; one of ${USAGE}`);
  }
}

/** The spec as text, every setting spelled out (what the trajectory records). */
export function formatSettleSpec(s: SettleSpec): string {
  switch (s.kind) {
    case "none":
      return "none";
    case "fixed":
      return `fixed:${s.ms}`;
    case "androidworld":
      return `androidworld:wait=${s.waitMs},cap=${s.capMs}`;
    default:
      return `${s.kind}:quiet=${s.quietMs},cap=${s.capMs}`;
  }
}
