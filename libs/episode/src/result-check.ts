/**
 * The last check before an episode is handed to a sink (and so committed): every number finite, every extra
 * within its shape and the bounds of LOG_LIMITS. The log parser already refuses bad values line by line, so this
 * never fires on the farm's own path; it guards the commit against any path that would write garbage.
 */
import { EpisodeError } from "./errors.ts";
import { LOG_LIMITS, badExtraName, badExtraValue } from "./log-bounds.ts";
import { shapeOf } from "./extras.ts";
import type { EpisodeTrajectory, StepExtra } from "./trajectory-types.ts";

/** Problems of a finished episode (empty when it may be committed). */
export function resultProblems(t: EpisodeTrajectory): string[] {
  const problems: string[] = [];
  const finite = (what: string, v: unknown): void => {
    if (typeof v !== "number" || !Number.isFinite(v)) problems.push(`${what} is ${String(v)}, not a finite number`);
  };
  finite("totalReward", t.totalReward);
  if (t.finalScore !== undefined) finite("finalScore", t.finalScore);
  t.steps.forEach((st, i) => {
    finite(`steps[${i}].reward`, st.reward);
    finite(`steps[${i}].timeOffsetMs`, st.timeOffsetMs);
    st.extras.forEach((e, k) => extraProblems(`steps[${i}].extras[${k}]`, e, problems));
  });
  (t.initialExtras ?? []).forEach((e, k) => extraProblems(`initialExtras[${k}]`, e, problems));
  for (const [k, v] of Object.entries(t.counters)) if (typeof v !== "number" || !Number.isFinite(v) || v < 0) problems.push(`counter ${k} is ${String(v)}`);
  return problems.slice(0, 10);
}

function extraProblems(at: string, e: StepExtra, problems: string[]): void {
  const name = badExtraName(e.name);
  if (name) problems.push(`${at}: ${name}`);
  const value = badExtraValue(e.value);
  if (value) problems.push(`${at} (${e.name}): value ${value}`);
  if (e.shape.length > 8 || e.shape.some((d) => !Number.isSafeInteger(d) || d < 0 || d > LOG_LIMITS.maxValueElements)) problems.push(`${at} (${e.name}): shape [${e.shape.join(",")}] is out of bounds`);
  else if (e.dtype !== "OBJECT") {
    const actual = shapeOf(e.value);
    if (!actual || actual.length !== e.shape.length || actual.some((d, i) => d !== e.shape[i])) problems.push(`${at} (${e.name}): value does not have its recorded shape [${e.shape.join(",")}]`);
  }
}

/** Throws EpisodeError("invalid_result") naming what is wrong, so nothing non-finite or mis-shaped is committed. */
export function assertCommittable(t: EpisodeTrajectory): void {
  const problems = resultProblems(t);
  if (problems.length > 0) throw new EpisodeError("invalid_result", `episode result of task ${t.taskId} cannot be committed: ${problems.join("; ")}`, false);
}
