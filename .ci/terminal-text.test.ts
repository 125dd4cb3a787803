/**
 * One character set for text printed to a terminal: escaping (or blanking) control and bidi characters is
 * written once, in @farm/terminal-text. A `.replace(` whose regex holds a control-character range anywhere
 * else is a second copy with its own set. Refusing characters (`.test`, validators) is a different job and
 * allowed. Tests may build their own checks.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { patternSites, withTree } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** A `.replace(` / `.replaceAll(` whose first argument is a regex with a C0/C1 control range or an escaped ESC. */
const ESCAPING = /\.replace(?:All)?\(\s*\/(?:[^/\n\\]|\\.)*?(?:\\u0000|\\x00|\\u0001|\\x01|\\u001[bB]|\\x1[bB]|\\u007[fF]|\\x7[fF])(?:[^/\n\\]|\\.)*\//g;

/** `file:line` of every escaping regex outside libs/terminal-text. */
export function escapingRegexes(root: string): string[] {
  return patternSites(root, ESCAPING, (rel) => rel.startsWith("libs/terminal-text/"));
}

test("no terminal escaping outside @farm/terminal-text", () => {
  assert.deepEqual(escapingRegexes(REPO), [], "use terminalSafe, terminalSafeJson or blankUnsafe from @farm/terminal-text");
});

test("the rule catches an escaping replace, not a validator", () => {
  withTree("terminal-rule-", {
    "libs/x/src/a.ts": "// escape\nexport const f = (s: string) => s.replace(/[\\u0000-\\u001f\\u202e]/g, \"?\");\n",
    "services/y/src/b.ts": "export const g = (s: string) =>\n  s\n    .replaceAll(/\\x1b/g, \"\");\n",
    // the queue's twin of terminalSafe as it was (libs/queue/src/episode-job.ts)
    "libs/queue/src/episode-job.ts": "function printable(s: string): string {\n  return s.replace(/[\\u0000-\\u001f\\u007f-\\u009f\\u202a-\\u202e]/g, (c) => `\\\\u${c.charCodeAt(0).toString(16)}`);\n}\n",
    "libs/x/src/ok.ts": "export const bad = (s: string) => /[\\u0000-\\u001f]/.test(s);\nexport const path = (s: string) => s.replace(/\\//g, \"_\");\n",
    "libs/terminal-text/src/index.ts": "export const t = (s: string) => s.replace(/[\\u0000-\\u001f]/g, \"\");\n",
  }, (root) => {
    assert.deepEqual(escapingRegexes(root).sort(), ["libs/queue/src/episode-job.ts:2", "libs/x/src/a.ts:2", "services/y/src/b.ts:3"]);
  });
});
