/**
 * @module @farm/episode/testing
 * What only this package's own tests use (internals they check one by one); not part of the public API
 * (`@farm/episode`), and imported by no production code (`.ci/test-subpaths.test.ts`).
 */
export { withGameConfigExtra, resetStepsWithGameConfig } from "./game-config.ts";
