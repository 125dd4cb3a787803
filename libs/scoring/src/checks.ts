/**
 * A family's checks run against the episode's device and turned into a score (FAMILIES.md "Checks"): each check
 * within its deadline, never throwing; a check that cannot run makes the score an error (never a silent 0);
 * the verdicts combine as `all`, `any` or `fraction`, and the reward is the family's `reward` × success.
 */
import { coerceError } from "@farm/errors";
import type { CheckSpec, FamilyChecks, TaskParams } from "@farm/task";
import { withDeadline } from "@farm/time";
import { compareValue, type Verdict } from "./compare.ts";
import { ScoringError } from "./errors.ts";
import { cut, DEFAULT_SCORE_LIMITS, type ScoreLimits } from "./limits.ts";
import { readSource, type SourceValue } from "./sources.ts";
import type { CheckResult, DeviceCalls, TaskScore } from "./types.ts";

export interface CheckContext {
  device: DeviceCalls;
  params: TaskParams;
  /** The agent's last `answer` text. */
  answer?: string;
  signal?: AbortSignal;
  limits?: Partial<ScoreLimits>;
}

function expectedOf(spec: CheckSpec): string {
  const c = spec.compare;
  if (c.kind === "exists") return c.value ? "exists" : "not exists";
  if (c.kind === "regex") return `regex ${c.regex.source}`;
  if (c.kind === "number") return `number ${c.op} ${c.value}`;
  if (c.kind === "json") return `json ${c.path}`;
  return `${c.kind === "equals" ? "==" : c.kind === "not_equals" ? "!=" : "fuzzy"} ${JSON.stringify(c.value.text)}`;
}

/** One check: read, compare, record; every failure is the check's `error`. */
export async function runCheck(spec: CheckSpec, ctx: CheckContext): Promise<CheckResult> {
  const limits = { ...DEFAULT_SCORE_LIMITS, ...ctx.limits };
  const timeoutMs = spec.timeoutSec > 0 ? spec.timeoutSec * 1000 : limits.defaultTimeoutMs;
  const t0 = performance.now();
  const record = (passed: boolean, observed: string, expected: string, error?: string): CheckResult => ({
    name: spec.name,
    kind: spec.source.kind,
    passed,
    observed: cut(observed, limits.maxObservedChars),
    expected: cut(expected, limits.maxObservedChars),
    ...(error !== undefined ? { error: cut(error, limits.maxObservedChars) } : {}),
  });
  if (ctx.signal?.aborted) return record(false, "", expectedOf(spec), "cancelled before the check ran");
  try {
    const existenceOnly = spec.compare.kind === "exists";
    const read: SourceValue = await withDeadline(
      readSource({ device: ctx.device, params: ctx.params, answer: ctx.answer, limits, left: () => timeoutMs - (performance.now() - t0) }, spec.source, existenceOnly),
      timeoutMs,
      () => new ScoringError("check_timeout", `did not finish in ${timeoutMs} ms`),
    );
    if ("error" in read) return record(false, "", expectedOf(spec), read.error);
    let v: Verdict;
    if (spec.compare.kind === "exists") {
      if (read.exists === undefined) return record(false, read.value, expectedOf(spec), `a ${spec.source.kind} check cannot compare existence`);
      v = { passed: read.exists === spec.compare.value, expected: expectedOf(spec) };
    } else v = compareValue(read.value, spec.compare, ctx.params);
    return record(v.passed, v.observed ?? read.value, v.expected);
  } catch (e) {
    return record(false, "", expectedOf(spec), coerceError(e).message);
  }
}

/** All the family's checks, in order, combined into the score. Never rejects. */
export async function scoreChecks(checks: FamilyChecks, ctx: CheckContext): Promise<TaskScore> {
  const results: CheckResult[] = [];
  for (const spec of checks.items) results.push(await runCheck(spec, ctx));
  const failed = results.filter((r) => r.error !== undefined);
  if (failed.length > 0) {
    const error = failed.map((r) => `${r.name}: ${r.error}`).join("; ");
    return { reward: 0, checks: results, error: cut(error, 2048) };
  }
  const passed = results.filter((r) => r.passed).length;
  const n = results.length;
  const success = n === 0 ? 0 : checks.combine === "any" ? (passed > 0 ? 1 : 0) : checks.combine === "fraction" ? passed / n : passed === n ? 1 : 0;
  return { success, reward: checks.reward * success, checks: results };
}
