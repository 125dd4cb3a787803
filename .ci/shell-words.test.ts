/**
 * One shell quoting: quoting a value for `sh` (`'` → `'\''`) and the ShellSyntaxError class are written once,
 * in @farm/shell-words; the driver and the simulator's shell both use them. Tests may quote by hand.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sourceFiles } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** A ShellSyntaxError class, or the single-quote escape `'\''` written in a string or template. */
const SHELL_TWIN = /class ShellSyntaxError\b|'\\\\''/g;

/** `file:line` of every shell-quoting twin outside libs/shell-words. */
export function shellTwins(root: string): string[] {
  const files = ["libs", "services"].flatMap((top) => {
    const dir = path.join(root, top);
    return fs.existsSync(dir) ? fs.readdirSync(dir).flatMap((pkg) => sourceFiles(path.join(dir, pkg, "src"))) : [];
  });
  const found: string[] = [];
  for (const file of [...files, ...sourceFiles(path.join(root, "loadtest/src"))]) {
    const rel = path.relative(root, file).split(path.sep).join("/");
    if (rel.startsWith("libs/shell-words/")) continue;
    const text = fs.readFileSync(file, "utf8");
    for (const m of text.matchAll(SHELL_TWIN)) found.push(`${rel}:${text.slice(0, m.index).split("\n").length}`);
  }
  return found;
}

test("no shell quoting or ShellSyntaxError outside @farm/shell-words", () => {
  assert.deepEqual(shellTwins(REPO), [], "use shQuote, shJoin, shSplit and ShellSyntaxError from @farm/shell-words");
});

test("the rule catches a second class and a hand-made quote", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "shell-rule-"));
  try {
    for (const d of ["libs/x/src", "libs/shell-words/src", "services/y/src"]) fs.mkdirSync(path.join(root, d), { recursive: true });
    fs.writeFileSync(path.join(root, "libs/x/src/a.ts"), "// lexer\nexport class ShellSyntaxError extends Error {}\n");
    fs.writeFileSync(path.join(root, "services/y/src/b.ts"), "export const q = (a: string) =>\n  `'${a.replaceAll(\"'\", \"'\\\\''\")}'`;\n");
    fs.writeFileSync(path.join(root, "libs/x/src/ok.ts"), "import { ShellSyntaxError } from \"@farm/shell-words\";\nexport { ShellSyntaxError };\nconst s = \"it's\";\n");
    fs.writeFileSync(path.join(root, "libs/shell-words/src/index.ts"), "export class ShellSyntaxError extends Error {}\nconst q = \"'\\\\''\";\n");
    assert.deepEqual(shellTwins(root).sort(), ["libs/x/src/a.ts:2", "services/y/src/b.ts:2"]);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
