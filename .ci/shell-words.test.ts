/**
 * One shell quoting: quoting a value for `sh` (`'` → `'\''`) and the ShellSyntaxError class are written once,
 * in @farm/shell-words; the driver and the simulator's shell both use them. Tests may quote by hand.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { patternSites, withTree } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** A ShellSyntaxError class, or the single-quote escape `'\''` written in a string or template. */
const SHELL_TWIN = /class ShellSyntaxError\b|'\\\\''/g;

/** `file:line` of every shell-quoting twin outside libs/shell-words. */
export function shellTwins(root: string): string[] {
  return patternSites(root, SHELL_TWIN, (rel) => rel.startsWith("libs/shell-words/"));
}

test("no shell quoting or ShellSyntaxError outside @farm/shell-words", () => {
  assert.deepEqual(shellTwins(REPO), [], "use shQuote, shJoin, shSplit and ShellSyntaxError from @farm/shell-words");
});

test("the rule catches a second class and a hand-made quote", () => {
  withTree("shell-rule-", {
    "libs/x/src/a.ts": "// lexer\nexport class ShellSyntaxError extends Error {}\n",
    "services/y/src/b.ts": "export const q = (a: string) =>\n  `'${a.replaceAll(\"'\", \"'\\\\''\")}'`;\n",
    "libs/x/src/ok.ts": "import { ShellSyntaxError } from \"@farm/shell-words\";\nexport { ShellSyntaxError };\nconst s = \"it's\";\n",
    "libs/shell-words/src/index.ts": "export class ShellSyntaxError extends Error {}\nconst q = \"'\\\\''\";\n",
  }, (root) => {
    assert.deepEqual(shellTwins(root).sort(), ["libs/x/src/a.ts:2", "services/y/src/b.ts:2"]);
  });
});
