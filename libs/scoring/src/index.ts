/**
 * @module @farm/scoring
 * Task families' parameters, set-up and checks (libs/task/FAMILIES.md): an episode's success read from the
 * device's state. The `TaskInstance` contract is shared with `@farm/task-protocol` (outside task code).
 */
export type * from "./types.ts";
export { renderText, renderShell, paramText } from "./render.ts";
export { drawParams, fixedParamsProblem } from "./params.ts";
export { ScoringError, type ScoringErrorCode } from "./errors.ts";
