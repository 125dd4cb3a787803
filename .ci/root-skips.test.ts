/**
 * The root-only switch: a test whose skip reason starts with `[root-only]` (the network-lab tests, through
 * labUnavailableReason) may skip without root, but when the suite runs as root (CI) that skip fails the run
 * (.ci/root-skips-reporter.mjs, added to every run by .ci/test-files.sh). Shown on temporary test files.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { withTree } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const REPORTER = path.join(REPO, ".ci/root-skips-reporter.mjs");

function runWithReporter(root: string, file: string, env: Record<string, string>): { status: number | null; stderr: string } {
  // A test runner of its own, not a subtest of this one (node:test marks its children with NODE_TEST_CONTEXT).
  const { NODE_TEST_CONTEXT: _, ...parent } = process.env;
  const r = spawnSync(process.execPath, ["--test", "--test-reporter=tap", "--test-reporter-destination=stdout", `--test-reporter=${REPORTER}`, "--test-reporter-destination=stderr", file], {
    cwd: root,
    encoding: "utf8",
    env: { ...parent, ...env },
  });
  return { status: r.status, stderr: r.stderr };
}

const FILES = {
  "lab.test.mjs": 'import { test } from "node:test";\ntest("the lab runs", { skip: "[root-only] the network lab needs root (ip netns add)" }, () => {});\ntest("another", () => {});\n',
  "other.test.mjs": 'import { test } from "node:test";\ntest("optional", { skip: "no chromium here" }, () => {});\n',
};

test("a root-only test that skips fails the run where root is required, and names the test", () => {
  withTree("root-skips-", FILES, (root) => {
    const r = runWithReporter(root, "lab.test.mjs", { FARM_REQUIRE_ROOT_TESTS: "1" });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /root-only tests skipped although the suite runs as root/);
    assert.match(r.stderr, /lab\.test\.mjs: the lab runs \(\[root-only\] the network lab needs root/);
  });
});

test("other skips, and root-only skips where root is not required, pass", { skip: process.getuid?.() === 0 ? "runs as root: the reporter requires root-only tests here" : false }, () => {
  withTree("root-skips-", FILES, (root) => {
    assert.equal(runWithReporter(root, "lab.test.mjs", { FARM_REQUIRE_ROOT_TESTS: "0" }).status, 0);
  });
});

test("a skip without the mark passes even where root is required", () => {
  withTree("root-skips-", FILES, (root) => {
    const r = runWithReporter(root, "other.test.mjs", { FARM_REQUIRE_ROOT_TESTS: "1" });
    assert.equal(r.status, 0, r.stderr);
  });
});

test("the network-lab tests declare themselves root-only, and every run checks it", () => {
  const netns = fs.readFileSync(path.join(REPO, "loadtest/src/net-lab/netns.ts"), "utf8");
  assert.match(netns, /export const ROOT_ONLY = "\[root-only\]"/);
  for (const file of ["loadtest/test/net-lab.test.ts"]) {
    assert.match(fs.readFileSync(path.join(REPO, file), "utf8"), /skip = await labUnavailableReason\(\)/, file);
  }
  assert.match(fs.readFileSync(path.join(REPO, ".ci/test-files.sh"), "utf8"), /--test-reporter=\.\/\.ci\/root-skips-reporter\.mjs/);
});
