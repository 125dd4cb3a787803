/**
 * @module @farm/trajectory/testing
 * What only this package's own tests use (internals they check one by one); not part of the public API
 * (`@farm/trajectory`), and imported by no production code (`.ci/test-subpaths.test.ts`).
 */
export { SCHEMA_VERSION } from "./schema.ts";
export { findDuplicates } from "./inspect.ts";
export { escapePartitionValue, unescapePartitionValue } from "./partition.ts";
