/** Normalisation shared by all dialects: steps frame, success checks, app screens, extras spec, log parsing. */
import { type Checker, list, num, obj, type Obj, str, strings } from "./checker.ts";
import type { AppScreen, ArraySpec, DataType, LogParsing, SetupStep, StepAction, SuccessCondition } from "./model.ts";
import { TASK_LIMITS } from "./limits.ts";
import { isLogcatTag } from "./names.ts";

/** Converts one step's payload (adb_call / adb_request / sleep …) into zero or more actions. */
export type StepPayload = (step: Obj, path: string) => StepAction[];

/**
 * `setup_steps` / `reset_steps`. A legacy command that becomes several current ones (disable_animations) yields
 * several steps on the same line; the success condition goes with the last of them.
 */
export function normaliseSteps(ck: Checker, raw: unknown, base: string, payload: StepPayload, wholeMessage: boolean): SetupStep[] {
  const steps: SetupStep[] = [];
  list(raw).forEach((item, i) => {
    const path = `${base}[${i}]`;
    const step = obj(item) ?? {};
    const line = ck.index.lineOf(path);
    const actions = payload(step, path);
    const condition = successCondition(ck, step.success_condition, `${path}.success_condition`, wholeMessage);
    if (actions.length === 0 && !condition) {
      ck.fail("empty_step", path, "step has neither a command nor a success_condition check", "give it a command (adb_request / adb_call / sleep) or a check, or delete it");
      return;
    }
    if (actions.length === 0) steps.push({ successCondition: condition, line });
    actions.forEach((action, k) => {
      const last = k === actions.length - 1;
      steps.push(last && condition ? { action, successCondition: condition, line } : { action, line });
    });
  });
  return steps;
}

function successCondition(ck: Checker, raw: unknown, path: string, wholeMessage: boolean): SuccessCondition | undefined {
  const c = obj(raw);
  if (!c) return undefined;
  const numRetries = num(c.num_retries);
  switch (c.check) {
    case "wait_for_app_screen": {
      const w = obj(c.wait_for_app_screen) ?? {};
      const p = `${path}.wait_for_app_screen`;
      const appScreen = normaliseAppScreen(ck, w.app_screen, `${p}.app_screen`);
      const timeoutSec = ck.timeout(`${p}.timeout_sec`, num(w.timeout_sec), true);
      return { numRetries, check: { kind: "wait_for_app_screen", appScreen, timeoutSec } };
    }
    case "check_install": {
      const w = obj(c.check_install) ?? {};
      const p = `${path}.check_install`;
      const packageName = ck.packageName(`${p}.package_name`, str(w.package_name));
      const timeoutSec = ck.timeout(`${p}.timeout_sec`, num(w.timeout_sec), true);
      return { numRetries, check: { kind: "check_install", packageName, timeoutSec } };
    }
    case "wait_for_message": {
      const w = obj(c.wait_for_message) ?? {};
      const p = `${path}.wait_for_message`;
      // The early-2021 runtime matched the whole message; the 2021 public one start-anchored.
      const message = ck.regex(`${p}.message`, str(w.message), wholeMessage);
      const timeoutSec = ck.timeout(`${p}.timeout_sec`, num(w.timeout_sec), true);
      return { numRetries, check: { kind: "wait_for_message", message, timeoutSec } };
    }
    default:
      ck.warn(path, "success_condition without a check is ignored");
      return undefined;
  }
}

export function normaliseAppScreen(ck: Checker, raw: unknown, path: string): AppScreen {
  const a = obj(raw) ?? {};
  const activity = ck.activity(`${path}.activity`, str(a.activity));
  if (activity.includes("/.")) ck.warn(`${path}.activity`, "the foreground activity is reported in expanded form (pkg/pkg.Class), so a short form never matches");
  const viewHierarchyPath = strings(a.view_hierarchy_path).map((r, i) => ck.regex(`${path}.view_hierarchy_path[${i}]`, r));
  return { activity, viewHierarchyPath };
}

export function normaliseExtrasSpec(ck: Checker, raw: unknown): ArraySpec[] {
  const seen = new Set<string>();
  const specs: ArraySpec[] = [];
  list(raw).forEach((item, i) => {
    const s = obj(item) ?? {};
    const path = `extras_spec[${i}]`;
    const name = str(s.name);
    if (name === "") ck.fail("bad_extras_spec", `${path}.name`, "extras_spec entry without a name", "name the extra as the app logs it, e.g. name: \"grid\"");
    // Upstream never read extras_spec at run time, and a real file repeats a name: a warning, not an error.
    else if (seen.has(name)) ck.warn(`${path}.name`, `extra "${name}" is declared twice`);
    seen.add(name);
    const dtype = str(s.dtype);
    if (dtype === "" || dtype === "INVALID_DATA_TYPE")
      ck.fail("bad_dtype", `${path}.dtype`, `extra "${name}" has no valid dtype`, "set dtype to one of FLOAT, DOUBLE, INT8…INT64, UINT8…UINT64, BOOL, STRING_U1/U16/U25/U250, STRING, OBJECT");
    const shape = list(s.shape).map(num);
    checkShape(ck, `${path}.shape`, name, shape);
    specs.push({ name, shape, dtype: dtype as DataType });
  });
  return specs;
}

/** Each dimension 1 … maxShapeElements, at most maxShapeRank of them, and at most maxShapeElements in all. */
function checkShape(ck: Checker, path: string, name: string, shape: number[]): void {
  const { maxShapeRank, maxShapeElements } = TASK_LIMITS;
  const hint = `dimensions are sizes 1 … ${maxShapeElements}, e.g. shape: [4, 4]; use shape: [] for a scalar`;
  if (shape.length > maxShapeRank) ck.fail("bad_shape", `${path}[${maxShapeRank}]`, `extra "${name}" has ${shape.length} dimensions, more than ${maxShapeRank}`, hint);
  let elements = 1;
  shape.forEach((d, k) => {
    if (d < 0) ck.fail("bad_shape", `${path}[${k}]`, `extra "${name}" has a negative dimension ${d}`, hint);
    else if (d === 0) ck.fail("bad_shape", `${path}[${k}]`, `extra "${name}" has a zero dimension, so it could hold no values`, hint);
    else if (d > maxShapeElements) ck.fail("bad_shape", `${path}[${k}]`, `extra "${name}" has a dimension of ${d}`, hint);
    elements *= Math.max(1, d);
  });
  if (elements > maxShapeElements && shape.every((d) => d >= 1 && d <= maxShapeElements))
    ck.fail("bad_shape", path, `extra "${name}" would hold ${elements} elements, more than the ${maxShapeElements} one log line can carry`, hint);
}

const FILTER_SPEC = /^(?:[^\s:]+):[VDIWEFS]$/;

/** `log_parsing_config` of the seed and current dialects. */
export function normaliseLogParsing(ck: Checker, raw: unknown): LogParsing {
  const c = obj(raw) ?? {};
  const filters = strings(c.filters);
  filters.forEach((f, i) => {
    if (!FILTER_SPEC.test(f)) ck.fail("bad_value", `log_parsing_config.filters[${i}]`, `${JSON.stringify(f)} is not a logcat filter spec`, "write <tag>:<priority>, e.g. \"AndroidRLTask:V\"");
  });
  const r = obj(c.log_regexps) ?? {};
  const p = "log_parsing_config.log_regexps";
  const many = (field: string): ReturnType<Checker["regex"]>[] => strings(r[field]).map((s, i) => ck.regex(`${p}.${field}[${i}]`, s));
  const score = str(r.score);
  return {
    filters,
    score: score === "" ? undefined : ck.regex(`${p}.score`, score),
    reward: many("reward"),
    episodeEnd: many("episode_end"),
    extra: many("extra"),
    jsonExtra: many("json_extra"),
    rewardEvent: list(r.reward_event).map((item, i) => {
      const e = obj(item) ?? {};
      return { event: ck.regex(`${p}.reward_event[${i}].event`, str(e.event)), reward: num(e.reward) };
    }),
  };
}

/** Regexes the early-2021 runtime hard-coded (task-format.md §7.11). */
export const INTERNAL_2021_REGEXPS = {
  score: "^[Ss]core: ([-+]?[0-9]*\\.?[0-9]*)$",
  reward: "^[Rr]eward: ([-+]?[0-9]*\\.?[0-9]*)$",
  extra: "^extra: (?P<name>[^ ]*) (?P<extra>.*)$",
  jsonExtra: "^json_extra: (?P<json_extra>.*)$",
  episodeEnd: "^episode end$",
} as const;

/** Dialect (b): `log_tag` / `log_prefix` become a log parsing config with the fixed regexes of that runtime. */
export function internal2021LogParsing(ck: Checker, logTag: string, logPrefix: string): LogParsing {
  const filters = ["AndroidRLTask:V"];
  if (logTag !== "") {
    if (isLogcatTag(logTag)) filters.push(`${logTag}:V`);
    else ck.warn("log_tag", `log_tag ${JSON.stringify(logTag.length > 40 ? `${logTag.slice(0, 40)}…` : logTag)} is not a logcat tag; ignored`);
  }
  const re = INTERNAL_2021_REGEXPS;
  return {
    filters,
    messagePrefix: logPrefix === "" ? undefined : ck.regex("log_prefix", logPrefix),
    score: ck.regex("log_tag", re.score),
    reward: [ck.regex("log_tag", re.reward)],
    episodeEnd: [ck.regex("log_tag", re.episodeEnd)],
    extra: [ck.regex("log_tag", re.extra)],
    jsonExtra: [ck.regex("log_tag", re.jsonExtra)],
    rewardEvent: [],
  };
}
