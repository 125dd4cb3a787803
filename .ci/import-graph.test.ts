/** The import-graph check passes on this repo and fails on temporary trees that break each rule. */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { withTree } from "./source-files.ts";
import { checkImportGraph, readLibOrder } from "./import-graph.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The violations in a repo of two libs, `a` before `b`, with the given files (path → text) added. */
function messages(files: Record<string, string>, order = "`a`, `b`"): string[] {
  const base: Record<string, string> = {
    "README.md": `# x\n\nLibraries, in dependency order (each may use only those before it):\n${order}.\n\nmore text \`c\`\n`,
    "libs/a/package.json": JSON.stringify({ name: "@farm/a" }),
    "libs/a/src/index.ts": "export const a = 1;\n",
    "libs/b/package.json": JSON.stringify({ name: "@farm/b" }),
    "libs/b/src/index.ts": 'import { a } from "@farm/a";\nexport const b = a;\n',
    "services/s/package.json": JSON.stringify({ name: "@farm/s" }),
    "services/s/src/index.ts": 'import { b } from "@farm/b";\nexport const s = b;\n',
  };
  return withTree("import-graph-", { ...base, ...files }, (root) => checkImportGraph(root).map((v) => `${v.file}:${v.line}: ${v.message}`));
}

test("this repository passes", () => {
  assert.deepEqual(checkImportGraph(REPO), []);
});

test("a well-formed tree passes", () => {
  assert.deepEqual(messages({}), []);
});

test("a cycle between two files fails, naming both", () => {
  const m = messages({
    "libs/a/src/x.ts": 'import { y } from "./y.ts";\nexport const x = () => y;\n',
    "libs/a/src/y.ts": 'import type { x } from "./x.ts";\nexport const y = 1 as unknown as typeof x;\n',
  });
  assert.equal(m.length, 1);
  assert.match(m[0]!, /import cycle between files: libs\/a\/src\/x\.ts ⇄ libs\/a\/src\/y\.ts/);
});

test("a cycle through a dynamic import fails too", () => {
  const m = messages({
    "libs/a/src/x.ts": 'export const load = () => import("./y.ts");\n',
    "libs/a/src/y.ts": 'import { load } from "./x.ts";\nexport const y = load;\n',
  });
  assert.equal(m.length, 1);
  assert.match(m[0]!, /import cycle between files/);
});

test("a lib using a lib after it (and so a package cycle) fails", () => {
  const m = messages({ "libs/a/src/index.ts": 'import { b } from "@farm/b";\nexport const a = b;\n' });
  assert.ok(m.some((x) => /libs\/a\/src\/index\.ts:1: @farm\/a may use only the libs before it/.test(x)), m.join("\n"));
  assert.ok(m.some((x) => /import cycle between packages: @farm\/a ⇄ @farm\/b/.test(x)), m.join("\n"));
});

test("reaching into another package's src/ fails, by relative path or by subpath", () => {
  const m = messages({
    "libs/b/src/deep.ts": 'import { a } from "../../a/src/index.ts";\nexport const d = a;\n',
    "services/s/src/deep.ts": 'import { a } from "@farm/a/src/index.ts";\nexport const d = a;\n',
  });
  assert.equal(m.length, 2, m.join("\n"));
  assert.match(m[0]!, /libs\/b\/src\/deep\.ts:1: '\.\.\/\.\.\/a\/src\/index\.ts' reaches into @farm\/a; import it as '@farm\/a'/);
  assert.match(m[1]!, /services\/s\/src\/deep\.ts:1: '@farm\/a\/src\/index\.ts' reaches into @farm\/a's files/);
});

test("a subpath the package's exports map declares is a public entry point; others are not", () => {
  const m = messages({
    "libs/a/package.json": JSON.stringify({ name: "@farm/a", exports: { ".": "./src/index.ts", "./wire": "./src/wire.ts" } }),
    "libs/a/src/wire.ts": "export const w = 1;\n",
    "libs/b/src/deep.ts": 'import { w } from "@farm/a/wire";\nimport { a } from "@farm/a/src/index.ts";\nexport const d = w + a;\n',
  });
  assert.equal(m.length, 1, m.join("\n"));
  assert.match(m[0]!, /libs\/b\/src\/deep\.ts:2: '@farm\/a\/src\/index\.ts' reaches into @farm\/a's files/);
});

test("a lib test starting a service fails; a lib test may use a later lib", () => {
  const m = messages({
    "libs/a/test/x.test.ts": 'import { b } from "@farm/b";\nimport { s } from "@farm/s";\nconsole.log(b, s);\n',
  });
  assert.equal(m.length, 1, m.join("\n"));
  assert.match(m[0]!, /libs\/a\/test\/x\.test\.ts:2: a lib \(@farm\/a\) must not import a service \(@farm\/s\)/);
});

test("a lib missing from README's order fails", () => {
  const m = messages({}, "`a`");
  assert.ok(m.some((x) => /libs\/b\/package\.json:1: @farm\/b is missing from README\.md's/.test(x)), m.join("\n"));
});

test("README's order is read from its paragraph only", () => {
  assert.deepEqual(readLibOrder("x\nLibraries, in dependency order: `p` (a PRNG), `r`.\n\n`s`"), ["@farm/p", "@farm/r"]);
});
