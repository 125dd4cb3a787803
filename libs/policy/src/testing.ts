/**
 * @module @farm/policy/testing
 * What only this package's own tests use (internals they check one by one); not part of the public API
 * (`@farm/policy`), and imported by no production code (`.ci/test-subpaths.test.ts`).
 */
export { UI_TEXT_MAX_CHARS } from "./ui-action.ts";
export { parseAnswer } from "./answer.ts";
export { extractAction } from "./llm/index.ts";
export { parsePolicySpec } from "./spec.ts";
