/**
 * Range and character checks over every value of a parsed task (protobufjs toObject), by field name: each number
 * against its field's meaning (finite; durations, steps, retries, coordinates, rewards within TASK_LIMITS), each
 * text field free of NUL, bidi and control characters where they make no sense, and of bounded length.
 * Runs after normalisation, so the more specific errors of the normaliser (negative_timeout …) win on a line.
 */
import type { Checker, Obj } from "./checker.ts";
import { terminalSafe } from "@farm/terminal-text";
import { ALWAYS_FORBIDDEN, TASK_ID_PATTERN, TASK_LIMITS } from "./limits.ts";

interface NumberRule {
  min: number;
  max: number;
  what: string;
  hint: string;
}

const L = TASK_LIMITS;
const seconds: NumberRule = { min: 0, max: L.maxDurationSec, what: "seconds", hint: `use 0 … ${L.maxDurationSec} seconds` };
const episodeSeconds: NumberRule = { ...seconds, hint: `use 0 (no limit) … ${L.maxDurationSec} seconds` };
const NUMBER_RULES: ReadonlyMap<string, NumberRule> = new Map([
  ["timeout_sec", seconds],
  ["time_sec", seconds],
  ["max_episode_sec", episodeSeconds],
  ["max_duration_sec", episodeSeconds],
  ["timeout_ms", { min: 0, max: L.maxDurationSec * 1000, what: "milliseconds", hint: `use 0 … ${L.maxDurationSec * 1000} milliseconds` }],
  ["max_episode_steps", { min: 0, max: L.maxEpisodeSteps, what: "steps", hint: `use 0 (no limit) … ${L.maxEpisodeSteps} steps` }],
  ["max_num_steps", { min: 0, max: L.maxEpisodeSteps, what: "steps", hint: `use 0 (no limit) … ${L.maxEpisodeSteps} steps` }],
  ["num_retries", { min: 0, max: L.maxRetries, what: "retries", hint: `use 0 … ${L.maxRetries}` }],
  ["x", { min: 0, max: L.maxCoordinate, what: "pixels", hint: `use pixel coordinates 0 … ${L.maxCoordinate}` }],
  ["y", { min: 0, max: L.maxCoordinate, what: "pixels", hint: `use pixel coordinates 0 … ${L.maxCoordinate}` }],
  ["reward", { min: -L.maxAbsReward, max: L.maxAbsReward, what: "reward", hint: `use a reward between -${L.maxAbsReward} and ${L.maxAbsReward}` }],
]);

/** Fields holding Python regexes (their length is bounded by the regex compiler) or free prose. */
const REGEX_FIELDS = new Set(["score", "reward", "episode_end", "extra", "json_extra", "event", "message", "view_hierarchy_path", "log_prefix"]);
const PROSE_FIELDS = new Set(["description"]);
/** Extras shapes are checked by the extras_spec normaliser. */
const SKIP = new Set(["shape"]);
/** Any control character (tab and newline included): refused in one-line fields. */
const ANY_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const PROSE_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

export function checkRawValues(ck: Checker, raw: Obj): void {
  const visit = (value: unknown, name: string, path: string): void => {
    if (SKIP.has(name)) return;
    if (Array.isArray(value)) {
      value.forEach((v, i) => visit(v, name, `${path}[${i}]`));
    } else if (typeof value === "number") {
      checkNumber(ck, name, path, Number(value));
    } else if (typeof value === "string") {
      checkText(ck, name, path, value);
    } else if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
      for (const [k, v] of Object.entries(value as Obj)) visit(v, k, path ? `${path}.${k}` : k);
    }
  };
  visit(raw, "", "");
}

function checkNumber(ck: Checker, name: string, path: string, v: number): void {
  const rule = NUMBER_RULES.get(name);
  if (!Number.isFinite(v)) {
    ck.fail("out_of_range", path, `${v} is not a finite number`, rule?.hint ?? "write a finite number");
    return;
  }
  if (rule && (v < rule.min || v > rule.max)) ck.fail("out_of_range", path, `${v} ${rule.what} is out of range`, rule.hint);
}

function checkText(ck: Checker, name: string, path: string, v: string): void {
  if (ALWAYS_FORBIDDEN.test(v)) {
    ck.fail("bad_text", path, `text ${quote(v)} contains a NUL or bidirectional control character`, "remove it");
    return;
  }
  if (REGEX_FIELDS.has(name)) return;
  if (v.length > L.maxStringChars) {
    ck.fail("too_large", path, `text of ${v.length} characters is longer than the ${L.maxStringChars} allowed`, "shorten it");
    return;
  }
  const control = PROSE_FIELDS.has(name) ? PROSE_CONTROL : ANY_CONTROL;
  if (control.test(v)) ck.fail("bad_text", path, `text ${quote(v)} contains a control character`, "remove it (write one-line values without tabs, newlines or escapes such as \\x1b)");
}

/** The task id (written or derived from the file name) must be usable as a file name, a metric label and a job key. */
export function checkTaskId(ck: Checker, id: string, derived: boolean): void {
  if (TASK_ID_PATTERN.test(id)) return;
  const where = derived ? "the task has no id, and its file name" : "the id";
  ck.fail("bad_id", derived ? "" : "id", `${where} ${quote(id)} is not a valid task id`, `use 1-${L.maxIdChars} letters, digits, '_', '.', '-', starting with a letter or digit`);
}

/** A value for a message: JSON-quoted, cut to 60 characters, control characters escaped. */
export function quote(v: string): string {
  return terminalSafe(JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v));
}
