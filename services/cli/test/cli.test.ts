/** The `farm` command's own surface: --version, bench's help and its option checking (no scenario runs). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { REPO } from "./fixtures.ts";

const farm = (...args: string[]) => spawnSync(process.execPath, [path.join(REPO, "services/cli/bin/farm.js"), ...args], { cwd: REPO, encoding: "utf8", timeout: 60_000 });

test("farm --version prints the CLI package's version", () => {
  const r = farm("--version");
  assert.equal(r.status, 0, r.stderr);
  const { version } = JSON.parse(fs.readFileSync(path.join(REPO, "services/cli/package.json"), "utf8"));
  assert.equal(r.stdout.trim(), version);
});

test("farm bench --help lists every scenario; farm bench <scenario> --help its options", () => {
  const r = farm("bench", "--help");
  assert.equal(r.status, 0, r.stderr);
  for (const name of ["adb", "avro", "farm", "sim"]) assert.match(r.stdout, new RegExp(`^  ${name} \\[options\\]`, "m"));
  const f = farm("bench", "farm", "--help");
  assert.equal(f.status, 0, f.stderr);
  for (const flag of ["--devices <n>", "--episodes <n>", "--max-steps <n>", "--settle-ms <n>", "--window <n>", "--profile <name>"]) assert.ok(f.stdout.includes(flag), `${flag} in\n${f.stdout}`);
});

test("farm bench rejects a mistyped option and an unknown scenario before running anything", () => {
  const typo = farm("bench", "farm", "--devics", "2");
  assert.notEqual(typo.status, 0);
  assert.match(typo.stderr, /unknown option '--devics'/);
  assert.match(typo.stderr, /Did you mean --devices\?/);
  const unknown = farm("bench", "nope");
  assert.notEqual(unknown.status, 0);
  assert.match(unknown.stderr, /unknown scenario 'nope'; known: (\w[\w-]*, )*adb, avro, /);
});
