/**
 * @module @farm/scoring
 * Task families' parameters, set-up and checks (libs/task/FAMILIES.md): an episode's success read from the
 * device's state. The `TaskInstance` contract is shared with `@farm/task-protocol` (outside task code).
 *
 *   const instance = createFamilyInstance(loaded.family, { index, seed }, { description: loaded.task.description });
 *   const { goal, params } = await instance.initialize(device, signal);   // after the task's reset steps
 *   const score = await instance.score(device, { answer, final: true }, signal); // never rejects: score.error
 */
export type * from "./types.ts";
export { renderText, renderShell, paramText } from "./render.ts";
export { drawParams, fixedParamsProblem } from "./params.ts";
export { ScoringError, type ScoringErrorCode } from "./errors.ts";
export { createFamilyInstance, type FamilyInstanceOptions } from "./family-instance.ts";
export { runCheck, scoreChecks, type CheckContext } from "./checks.ts";
export { DEFAULT_SCORE_LIMITS, type ScoreLimits } from "./limits.ts";
export { fuzzyEquals } from "./fuzzy.ts";
export { closeSqlThreads } from "./sql-thread.ts";
