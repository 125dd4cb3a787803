/**
 * Test subpaths stay in tests: a package's `./testing` entry point (`@farm/adb/testing`, `@farm/simulator/testing`)
 * exports internals and test kits for test files; production code imports packages by their public face only.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { patternSites, withTree } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** An import or re-export (static or dynamic) of some package's `testing` subpath. */
const TESTING_IMPORT = /(?:\bfrom|\bimport\s*\(?)\s*["']@farm\/[a-z0-9-]+\/testing["']/;

/** `file:line` of every production import of a test subpath (a package's own src/testing.ts may re-export). */
export function testingImports(root: string): string[] {
  return patternSites(root, TESTING_IMPORT, (rel) => /^libs\/[^/]+\/src\/testing\.ts$/.test(rel));
}

test("no production code imports a package's testing subpath", () => {
  assert.deepEqual(testingImports(REPO), [], "import the package's public face ('@farm/<name>'); move what production needs there");
});

test("the rule catches static and dynamic imports of a testing subpath, and leaves tests alone", () => {
  withTree("test-subpaths-", {
    "libs/x/src/a.ts": 'import { parsePmList } from "@farm/adb/testing";\nimport { AdbDriver } from "@farm/adb";\n',
    "services/s/src/b.ts": 'const kit = await import("@farm/simulator/testing");\n',
    "libs/x/test/a.test.ts": 'import { parsePmList } from "@farm/adb/testing";\n',
  }, (root) => {
    assert.deepEqual(testingImports(root), ["libs/x/src/a.ts:1", "services/s/src/b.ts:1"]);
  });
});
