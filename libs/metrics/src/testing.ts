/**
 * @module @farm/metrics/testing
 * What only this package's own tests use (internals they check one by one); not part of the public API
 * (`@farm/metrics`), and imported by no production code (`.ci/test-subpaths.test.ts`).
 */
export { FARM_VERSION } from "./version.ts";
export { DECLARED_EPISODE_ENDS } from "./vocabulary.ts";
