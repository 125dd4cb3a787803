/**
 * Hot paths make their objects without a literal that starts with a spread and goes on with more members
 * (`{ ...a, b }`, `{ ...(x ? { x } : {}), ...(y ? { y } : {}) }`). On Node 20 each such object takes ~1-4 µs to
 * make (V8 clones the first part, then each added key takes the slow path; measured in `farm bench farm`: the adb
 * call report did it once per action, 6.7 µs against 0.5 µs assigned), where `{ a, ...b }` or `Object.assign` take
 * tens of nanoseconds. The hot paths are the files below: each runs per step, per action, per log line or per node.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { patternSites, withTree, type SiteFinder } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** What runs per step (worker), per action, per log line or per tree node (worker and simulated device). */
export const HOT_FILES = new Set([
  "libs/episode/src/episode-run.ts",
  "libs/episode/src/action.ts",
  "libs/episode/src/extras.ts",
  "libs/episode/src/log-accumulator.ts",
  "libs/episode/src/episode-frames.ts",
  "libs/episode/src/observation-budget.ts",
  "libs/episode/src/policy-versions.ts",
  "libs/adb/src/exec.ts",
  "libs/adb/src/grpc/action-channel.ts",
  "libs/adb/src/grpc/input-stream.ts",
  "libs/adb/src/grpc/h2-client.ts",
  "libs/adb/src/logcat.ts",
  "libs/adb/src/logcat-parse.ts",
  "libs/adb/src/a11y/read-tree.ts",
  "libs/policy/src/answer.ts",
  "libs/metrics/src/bound-metrics.ts",
  "libs/time/src/index.ts",
  "libs/task/src/regex/engine.ts",
  "libs/trajectory/src/episode-codec.ts",
  "libs/simulator/src/android/system/log-buffer.ts",
  "libs/simulator/src/apps/ui/widget.ts",
  "libs/simulator/src/apps/ui/widgets.ts",
  "libs/simulator/src/apps/ui/motion.ts",
  "services/worker/src/metrics-wiring.ts",
]);

/** Object literals whose first member is a spread and that have more members. */
const spreadFirst: SiteFinder = function* (text) {
  const src = ts.createSourceFile("hot.ts", text, ts.ScriptTarget.Latest, false);
  const found: number[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isObjectLiteralExpression(n) && n.properties.length > 1 && ts.isSpreadAssignment(n.properties[0]!)) found.push(n.getStart(src));
    ts.forEachChild(n, visit);
  };
  visit(src);
  yield* found;
};

/** `file:line` of every spread-first literal in the hot files (`hot`: which files count). */
export function hotSpreads(root: string, hot: ReadonlySet<string> = HOT_FILES): string[] {
  return patternSites(root, spreadFirst, (rel) => !hot.has(rel));
}

test("hot paths make no object with a spread-first literal that adds members", () => {
  assert.deepEqual(hotSpreads(REPO), [], "put the spread last ({ a, ...b }), assign the optional keys, or use Object.assign");
});

test("every hot file named exists (a renamed file must not drop out of the rule)", () => {
  const missing = [...HOT_FILES].filter((rel) => !ts.sys.fileExists(path.join(REPO, rel)));
  assert.deepEqual(missing, []);
});

test("the rule catches a spread-first literal over several lines, and lets a spread-last one and a lone spread pass", () => {
  withTree("hot-rule-", {
    "libs/x/src/hot.ts": [
      "export function f(a: object, b?: string) {",
      "  const ok1 = { b, ...a };",
      "  const ok2 = { ...a };",
      "  return {",
      "    ...(b ? { b } : {}),",
      "    ...a,",
      "  };",
      "}",
      "",
    ].join("\n"),
    "libs/x/src/cold.ts": "export const c = (a: object) => ({ ...a, z: 1 });\n",
  }, (root) => {
    assert.deepEqual(hotSpreads(root, new Set(["libs/x/src/hot.ts"])), ["libs/x/src/hot.ts:4"]);
  });
});
