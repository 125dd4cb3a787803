/**
 * `farm trajectories inspect / export / query` as a user runs them: the command in a child process on
 * trajectory files written by the real writer. (The libraries' own tests cover reading, export and
 * queries in-process; these check the commands' output, exit codes and error messages.)
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { TrajectoryWriter, listTrajectoryFiles, syntheticEpisode, writeEpisodeFile, type EpisodeRecord, type TrajectorySummary } from "@farm/trajectory";
import { REPO } from "./fixtures.ts";

const run = promisify(execFile);
const FARM = path.join(REPO, "services/cli/bin/farm.js");
const farm = (args: string[]) => run(process.execPath, [FARM, ...args], { cwd: REPO, maxBuffer: 64 << 20 });
/** The command's exit code and output, whether it succeeded or not. */
const farmExit = (args: string[]) =>
  farm(args).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

const made: string[] = [];
after(() => Promise.all(made.map((d) => rm(d, { recursive: true, force: true }))));
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "cli-trajectories-"));
  made.push(dir);
  return dir;
}

async function writeAvro(outDir: string, writerId: string, records: EpisodeRecord[], opts: { frameEvery?: number; maxEpisodesPerFile?: number } = {}): Promise<void> {
  const w = await TrajectoryWriter.open({ outDir, writerId, ...opts });
  for (const r of records) await w.append(r);
  await w.close();
}

/** Two writers; episode 1 retried (attempt 2) and written again by the second writer. */
async function dataset(): Promise<string> {
  const dir = await tempDir();
  await writeAvro(dir, "a", [0, 1, 2].map((i) => syntheticEpisode(i, { steps: 4, frames: true })), { frameEvery: 2 });
  await writeAvro(dir, "b", [syntheticEpisode(1, { steps: 4, attempt: 2 }), syntheticEpisode(3, { steps: 4 })]);
  return dir;
}

describe("farm trajectories inspect / export --jsonl", () => {
  it("inspect prints counts and duplicates (JSON and text); export --jsonl writes one episode per line", async () => {
    const dir = await dataset();
    const s = JSON.parse((await farm(["trajectories", "inspect", "--json", dir])).stdout) as TrajectorySummary;
    assert.equal(s.episodes, 5);
    assert.equal(s.duplicates.length, 1);
    const human = await farm(["trajectories", "inspect", dir]);
    assert.match(human.stdout, /episodes: 5 \(unique 4\)/);
    assert.match(human.stdout, /duplicates: 1/);

    const { files } = await listTrajectoryFiles([dir]);
    const only = path.join(await tempDir(), "only.avro");
    await copyFile(files[0]!, only);
    const lines = (await farm(["trajectories", "export", "--jsonl", only])).stdout.trim().split("\n").map((l) => JSON.parse(l) as { episodeId: string; startedAt: string; steps: { frame?: string }[] });
    assert.equal(lines.length, 3);
    const rec = syntheticEpisode(0, { steps: 4, frames: true });
    assert.equal(lines[0]!.episodeId, rec.episodeId);
    assert.equal(lines[0]!.startedAt, rec.startedAt.toISOString());
    assert.equal(lines[0]!.steps[1]!.frame, Buffer.from(rec.steps[1]!.frame!).toString("base64"));
    assert.equal(lines[0]!.steps[0]!.frame, undefined);
  });

  it("export names an unreadable file on stderr (control bytes escaped), exports the good ones and exits 1", async () => {
    const dir = await tempDir();
    await writeEpisodeFile(syntheticEpisode(6, { steps: 2 }), { path: path.join(dir, "a-good.avro") });
    await writeFile(path.join(dir, "b-bad\u001b[31m.avro"), "not avro at all");
    await writeEpisodeFile(syntheticEpisode(7, { steps: 2 }), { path: path.join(dir, "c-good.avro") });
    const r = await farmExit(["trajectories", "export", "--jsonl", dir]);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout.trim().split("\n").length, 2, "both good files exported");
    assert.match(r.stderr, /b-bad\\x1b\[31m\.avro: /);
    assert.doesNotMatch(r.stderr, /\u001b/);
    assert.match(r.stderr, /1 of 3 files unreadable/);
  });
});

describe("farm trajectories export --format parquet / query", () => {
  it("exports, names a skipped file with exit code 2, and answers SQL as a table or JSON", async () => {
    const src = await tempDir();
    const out = path.join(await tempDir(), "ds");
    await writeAvro(src, "w1", Array.from({ length: 5 }, (_, i) => syntheticEpisode(i, { campaignId: "camp-a", episodeIndex: i, steps: 15 + (i % 7), frames: true })), { maxEpisodesPerFile: 4 });
    const bad = path.join(src, "zz-truncated.avro");
    await writeFile(bad, "not avro at all");
    const exp = await farmExit(["trajectories", "export", "--format", "parquet", src, "--out", out]);
    assert.equal(exp.code, 2, exp.stderr);
    assert.match(exp.stdout, /exported 5 episodes/);
    assert.ok(exp.stdout.includes(`unreadable file skipped: ${bad}`), exp.stdout);

    const sql = "SELECT count(*) AS episodes, sum(step_count) AS steps FROM episodes";
    const row = JSON.parse((await farm(["trajectories", "query", sql, out, "--json"])).stdout.trim()) as { episodes: number; steps: number };
    assert.equal(row.episodes, 5);
    const steps = await farm(["trajectories", "query", "SELECT count(*) AS n FROM steps", out, "--json"]);
    assert.deepEqual(JSON.parse(steps.stdout.trim()), { n: row.steps });
    const table = await farm(["trajectories", "query", sql, out]);
    assert.match(table.stdout, /^episodes\s+steps\n-+\s+-+\n5\s+\d+\n\(1 row\)\n$/);
  });

  it("a folder that is not a data set and bad options give clear errors", async () => {
    const empty = await tempDir();
    const cases: Array<[string[], RegExp]> = [
      [["trajectories", "query", "SELECT 1", empty], /no manifest\.json/],
      [["trajectories", "export", "--format", "parquet", empty], /needs --out/],
      [["trajectories", "export", "--format", "orc", empty], /--format must be jsonl or parquet/],
    ];
    for (const [args, message] of cases) {
      const r = await farmExit(args);
      assert.notEqual(r.code, 0, args.join(" "));
      assert.match(r.stderr, message);
    }
  });
});
