/**
 * One way to make a caught value an error: `coerceError(e)` (@farm/errors), which wraps what is not an Error
 * (a string, a gRPC status object, `undefined`) instead of pretending it is one. A cast `e as Error` reads
 * `.message` of whatever was thrown and prints `undefined` or throws itself. Tests may cast what they threw.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { patternSites, withTree } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** A type assertion to Error (alone or in a union: `as Error`, `as Error | undefined`); not `as ErrorLike`. */
const ERROR_CAST = /\bas\s+Error\b(?![\w$])|<Error>\s*\w/;

/** `file:line` of every cast of a value to Error in the production sources. */
export function errorCasts(root: string): string[] {
  return patternSites(root, ERROR_CAST, () => false);
}

test("no caught value is cast to Error", () => {
  assert.deepEqual(errorCasts(REPO), [], "use coerceError(e) from @farm/errors");
});

test("the rule catches a cast, in a union and over a line break, not coerceError or another type", () => {
  withTree("error-cast-rule-", {
    "libs/x/src/a.ts": "try { f(); } catch (e) {\n  log((e as Error).message);\n}\n",
    "services/y/src/b.ts": "export const m = (err: unknown) =>\n  (err as\n    Error | undefined)?.message;\n",
    "loadtest/src/c.ts": "export const n = (e: unknown) => (<Error>e).message;\n",
    "libs/x/src/ok.ts": "import { coerceError } from \"@farm/errors\";\nexport const m = (e: unknown) => coerceError(e).message;\nexport const k = (e: unknown) => (e as ErrorLike).code;\n",
    "libs/x/test/t.test.ts": "export const t = (e: unknown) => (e as Error).message;\n",
  }, (root) => {
    assert.deepEqual(errorCasts(root).sort(), ["libs/x/src/a.ts:2", "loadtest/src/c.ts:1", "services/y/src/b.ts:2"]);
  });
});
