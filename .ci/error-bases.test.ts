/**
 * One error base: a production error class extends FarmError (@farm/errors) or one of its subclasses, never
 * a built-in error directly (`extends Error`, `RangeError`, `TypeError`, …), so every thrown error has a
 * stable `code` and `retryable`. The classes that may not, and why, are listed here and in
 * libs/errors/README.md; a new one fails until it is listed with a reason. Tests may build their own errors.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { patternSites, withTree } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** `file#Class` → why it extends a built-in error instead of FarmError. */
export const ALLOWED = new Map<string, string>([
  ["libs/dm-env-rpc/src/client.ts#DmEnvRpcError", "its `code` is the numeric google.rpc.Status code of dm_env_rpc's wire, compared with grpc.status by clients"],
  ["services/worker/src/remote-env/env-error.ts#EnvError", "its `code` is the numeric gRPC status the server answers with (dm_env_rpc's wire)"],
]);

/** A class declaration whose base is one of JavaScript's built-in error classes. */
const BUILTIN_BASE = /\bclass \w+(?:<[^>{]*>)?\s+extends\s+(?:Range|Type|Syntax|Reference|Eval|URI|Aggregate)?Error\b(?!\w)/;

/** `file:line Class` of every class extending a built-in error outside libs/errors and the allowed list. */
export function builtinErrorClasses(root: string, allowed: ReadonlyMap<string, string> = ALLOWED): string[] {
  return patternSites(root, BUILTIN_BASE, (rel) => rel.startsWith("libs/errors/")).flatMap((site) => {
    const [rel, line] = site.split(":") as [string, string];
    const text = fs.readFileSync(path.join(root, rel), "utf8").split("\n").slice(Number(line) - 1).join("\n");
    const name = /\bclass (\w+)/.exec(text)?.[1] ?? "?";
    return allowed.has(`${rel}#${name}`) ? [] : [`${site} ${name}`];
  });
}

test("every production error class extends FarmError, except the listed ones", () => {
  assert.deepEqual(builtinErrorClasses(REPO), [], "extend FarmError (@farm/errors) with a code and retryable, or list the class here and in libs/errors/README.md with the reason");
});

test("every listed exception still exists (the list does not outlive its classes)", () => {
  const found = new Set(builtinErrorClasses(REPO, new Map()).map((s) => `${s.split(":")[0]}#${s.split(" ")[1]}`));
  assert.deepEqual([...ALLOWED.keys()].filter((k) => !found.has(k)), []);
  const readme = fs.readFileSync(path.join(REPO, "libs/errors/README.md"), "utf8");
  for (const key of ALLOWED.keys()) assert.ok(readme.includes(key.split("#")[1]!), `libs/errors/README.md does not name ${key}`);
});

test("the rule catches a class extending Error or a built-in subclass, over two lines too, and lets FarmError's family pass", () => {
  withTree("error-bases-", {
    "libs/x/src/a.ts": "export class AError extends Error {}\nclass Ok extends FarmError<\"x\"> {}\nclass B<T> extends\n  RangeError {}\nclass C extends ErrorBase {}\n",
    "libs/x/test/t.test.ts": "class T extends Error {}\n",
    "libs/errors/src/index.ts": "export class FarmError extends Error {}\n",
    "services/s/src/b.ts": "export class Listed extends TypeError {}\n",
  }, (root) => {
    assert.deepEqual(builtinErrorClasses(root, new Map([["services/s/src/b.ts#Listed", "a reason"]])), ["libs/x/src/a.ts:1 AError", "libs/x/src/a.ts:3 B"]);
    assert.deepEqual(builtinErrorClasses(root, new Map()), ["libs/x/src/a.ts:1 AError", "libs/x/src/a.ts:3 B", "services/s/src/b.ts:1 Listed"]);
  });
});
