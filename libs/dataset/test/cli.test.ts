import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { campaignEpisodes, tempDir, writeAvro } from "./helpers.ts";

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const farm = path.join(repoRoot, "services/cli/bin/farm.js");

describe("farm trajectories export --format parquet / query (the command)", () => {
  it("exports, names a skipped file with exit code 2, and answers SQL as a table or JSON", async () => {
    const src = await tempDir();
    const out = path.join(await tempDir(), "ds");
    await writeAvro(src, "w1", campaignEpisodes(5));
    const bad = path.join(src, "zz-truncated.avro");
    await writeFile(bad, "not avro at all");
    const exp = await run(process.execPath, [farm, "trajectories", "export", "--format", "parquet", src, "--out", out], { cwd: repoRoot }).then(
      () => assert.fail("expected exit code 2 (a file was skipped)"),
      (err: { code: number; stdout: string }) => err,
    );
    assert.equal(exp.code, 2);
    assert.match(exp.stdout, /exported 5 episodes/);
    assert.ok(exp.stdout.includes(`unreadable file skipped: ${bad}`), exp.stdout);

    const sql = "SELECT count(*) AS episodes, sum(step_count) AS steps FROM episodes";
    const json = await run(process.execPath, [farm, "trajectories", "query", sql, out, "--json"], { cwd: repoRoot });
    const row = JSON.parse(json.stdout.trim()) as { episodes: number; steps: number };
    assert.equal(row.episodes, 5);
    const steps = await run(process.execPath, [farm, "trajectories", "query", "SELECT count(*) AS n FROM steps", out, "--json"], { cwd: repoRoot });
    assert.deepEqual(JSON.parse(steps.stdout.trim()), { n: row.steps });
    const table = await run(process.execPath, [farm, "trajectories", "query", sql, out], { cwd: repoRoot });
    assert.match(table.stdout, /^episodes\s+steps\n-+\s+-+\n5\s+\d+\n\(1 row\)\n$/);
  });

  it("a folder that is not a data set and bad options give clear errors", async () => {
    const empty = await tempDir();
    await assert.rejects(run(process.execPath, [farm, "trajectories", "query", "SELECT 1", empty], { cwd: repoRoot }), (err: { stderr: string }) => /no manifest\.json/.test(err.stderr));
    await assert.rejects(run(process.execPath, [farm, "trajectories", "export", "--format", "parquet", empty], { cwd: repoRoot }), (err: { stderr: string }) => /needs --out/.test(err.stderr));
    await assert.rejects(run(process.execPath, [farm, "trajectories", "export", "--format", "orc", empty], { cwd: repoRoot }), (err: { stderr: string }) => /--format must be jsonl or parquet/.test(err.stderr));
  });
});
