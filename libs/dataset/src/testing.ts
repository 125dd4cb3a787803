/**
 * @module @farm/dataset/testing
 * What only this package's own tests use (internals they check one by one); not part of the public API
 * (`@farm/dataset`), and imported by no production code (`.ci/test-subpaths.test.ts`).
 */
export { readManifest } from "./manifest.ts";
