/**
 * `farm task convert` end to end: a folder of tasks to the current dialect and back to legacy (every written
 * file validates with the same hash), a file the current dialect cannot hold (an internal-2021 mpm location)
 * is refused with its reason and nothing written for it, a bad --to is an error, one file goes to stdout.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { loadTaskFile } from "@farm/task";
import { REPO } from "./fixtures.ts";

const run = promisify(execFile);
const FARM = path.join(REPO, "services/cli/bin/farm.js");
const tmp = mkdtempSync(path.join(tmpdir(), "farm-convert-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

const farm = (...args: string[]) => run(process.execPath, [FARM, ...args], { cwd: REPO, timeout: 120_000 });

test("a folder to current and back to legacy: same ids and hashes", async () => {
  const src = path.join(REPO, "tasks");
  const cur = path.join(tmp, "current");
  const r = await farm("task", "convert", "--to", "current", src, "--out", cur);
  assert.match(r.stderr, /classic_2048\.textproto -> .*current\/classic_2048\.textproto hash=[0-9a-f]{12} \(seed-2021 -> current\)/);
  const shipped = readdirSync(src, { recursive: true }).filter((f) => String(f).endsWith(".textproto")).length;
  assert.match(r.stderr, new RegExp(`\\b${shipped} converted, 0 not`), "every task file the project ships");
  const leg = path.join(tmp, "legacy");
  const back = await farm("task", "convert", "--to", "legacy", path.join(cur, "classic_2048.textproto"), "--out", path.join(leg, "classic_2048.textproto"));
  assert.match(back.stderr, /\(current -> seed-2021\)/);
  const original = loadTaskFile(path.join(src, "classic_2048.textproto"));
  for (const f of [path.join(cur, "classic_2048.textproto"), path.join(leg, "classic_2048.textproto")]) assert.equal(loadTaskFile(f).hash, original.hash, f);
});

test("what the target dialect cannot hold is refused with its reason; exit code 1", async () => {
  const internal = path.join(REPO, "../shared/corpus/androidenv-2021-internal/android_world_clock.textproto");
  const out = path.join(tmp, "refused.textproto");
  await assert.rejects(farm("task", "convert", "--to", "current", internal, "--out", out), (e: { code: number; stderr: string }) => {
    assert.equal(e.code, 1);
    assert.match(e.stderr, /android_world_clock\.textproto: setup_steps\[\d+\]\.install_apk\.mpm: the current dialect has no mpm location/);
    return true;
  });
  assert.ok(!readdirSync(tmp).includes("refused.textproto"));
});

test("one file without --out goes to stdout; a bad --to and several files without --out are errors", async () => {
  // Three independent commands (none writes a file): side by side.
  const [r] = await Promise.all([
    farm("task", "convert", "--to", "current", "tasks/classic_2048.textproto"),
    assert.rejects(farm("task", "convert", "--to", "yaml", "tasks/classic_2048.textproto"), (e: { code: number; stderr: string }) => e.code === 2 && /--to must be current or legacy/.test(e.stderr)),
    assert.rejects(farm("task", "convert", "--to", "current", "tasks"), (e: { code: number; stderr: string }) => e.code === 2 && /need --out DIR/.test(e.stderr)),
  ]);
  assert.match(r.stdout, /^# converted by farm task convert --to current/);
  assert.match(r.stdout, /\nmax_episode_steps: 500\n/);
});
