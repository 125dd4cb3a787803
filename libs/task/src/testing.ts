/**
 * @module @farm/task/testing
 * What only this package's own tests use (internals they check one by one); not part of the public API
 * (`@farm/task`), and imported by no production code (`.ci/test-subpaths.test.ts`).
 */
export { REGEX_LIMITS } from "./pyregex.ts";
export { resolveApk } from "./apk.ts";
export { taskHash } from "./hash.ts";
export { taskType } from "./schema.ts";
