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
import { exportCommands } from "../src/commands/demo.ts";

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
    const { files } = await listTrajectoryFiles([dir]);
    const only = path.join(await tempDir(), "only.avro");
    await copyFile(files[0]!, only);
    // The commands only read: side by side.
    const [json, human, exported] = await Promise.all([farm(["trajectories", "inspect", "--json", dir]), farm(["trajectories", "inspect", dir]), farm(["trajectories", "export", "--jsonl", only])]);
    const s = JSON.parse(json.stdout) as TrajectorySummary;
    assert.equal(s.episodes, 5);
    assert.equal(s.duplicates.length, 1);
    assert.match(human.stdout, /episodes: 5 \(unique 4\)/);
    assert.match(human.stdout, /duplicates: 1/);

    const lines = exported.stdout.trim().split("\n").map((l) => JSON.parse(l) as { episodeId: string; startedAt: string; steps: { frame?: string }[] });
    assert.equal(lines.length, 3);
    const rec = syntheticEpisode(0, { steps: 4, frames: true });
    assert.equal(lines[0]!.episodeId, rec.episodeId);
    assert.equal(lines[0]!.startedAt, rec.startedAt.toISOString());
    assert.equal(lines[0]!.steps[1]!.frame, Buffer.from(rec.steps[1]!.frame!).toString("base64"));
    assert.equal(lines[0]!.steps[0]!.frame, undefined);
  });

  it("agent episodes: inspect shows goals, agent statuses, answers and invalid actions; export --jsonl carries the v3 fields", async () => {
    const dir = await tempDir();
    const recs = [0, 1, 3, 4].map((i) => ({ ...syntheticEpisode(i, { steps: 5, frames: true, agent: true }), frameEvery: 1 }));
    await writeAvro(dir, "agent", recs, { frameEvery: 1 });
    const [json, inspected, exported] = await Promise.all([farm(["trajectories", "inspect", "--json", dir]), farm(["trajectories", "inspect", dir]), farm(["trajectories", "export", "--jsonl", dir])]);
    const s = JSON.parse(json.stdout) as TrajectorySummary;
    assert.equal(Object.values(s.goals).reduce((a, b) => a + b, 0), 4);
    assert.equal(s.invalidActions, recs.reduce((n, r) => n + r.invalidActions!, 0));
    const human = inspected.stdout;
    assert.ok(human.includes(`"${recs[0]!.goal}"`), human);
    assert.match(human, new RegExp(`agent status: .*; invalid actions: ${s.invalidActions}; answers: ${recs.filter((r) => r.answer).length}`));

    type Line = { episodeId: string; goal: string; agentStatus?: string; answer?: string; invalidActions: number; initialFrame: string; initialA11y: { elements: unknown[] }; steps: { a11y: { tree: string }; ui: { given: string; invalid?: string } }[] };
    const lines = exported.stdout.trim().split("\n").map((l) => JSON.parse(l) as Line);
    assert.deepEqual(lines.map((l) => [l.episodeId, l.goal, l.agentStatus, l.answer, l.invalidActions]), recs.map((r) => [r.episodeId, r.goal, r.agentStatus, r.answer, r.invalidActions]));
    assert.equal(lines[0]!.initialFrame, Buffer.from(recs[0]!.initialFrame!).toString("base64"));
    assert.deepEqual(lines[0]!.initialA11y.elements, recs[0]!.initialA11y!.elements);
    assert.deepEqual(lines[0]!.steps.map((st) => st.ui), recs[0]!.steps.map((st) => st.ui));
    assert.equal(lines[0]!.steps[0]!.a11y.tree, recs[0]!.steps[0]!.a11y!.tree);
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
    const [json, steps, table] = await Promise.all([farm(["trajectories", "query", sql, out, "--json"]), farm(["trajectories", "query", "SELECT count(*) AS n FROM steps", out, "--json"]), farm(["trajectories", "query", sql, out])]);
    const row = JSON.parse(json.stdout.trim()) as { episodes: number; steps: number };
    assert.equal(row.episodes, 5);
    assert.deepEqual(JSON.parse(steps.stdout.trim()), { n: row.steps });
    assert.match(table.stdout, /^episodes\s+steps\n-+\s+-+\n5\s+\d+\n\(1 row\)\n$/);
  });

  it("--layout episodes-nested writes one row per episode (view trajectories); the demo's printed goal query answers", async () => {
    const src = await tempDir();
    const recs = [0, 1, 2, 3].map((i) => ({ ...syntheticEpisode(i, { campaignId: "camp-g", episodeIndex: i, steps: 4, frames: true, agent: true }), frameEvery: 1 }));
    await writeAvro(src, "g", recs, { frameEvery: 1 });
    const nested = path.join(await tempDir(), "nested");
    const flat = path.join(await tempDir(), "flat");
    const printed = exportCommands(src).find((c) => c.includes("success_rate"))!;
    const sql = /query "([^"]+)"/.exec(printed)![1]!;
    // Two exports of one source to two folders, each then queried: two lanes side by side.
    const [[exp, nestedRows], goalRows] = await Promise.all([
      farmExit(["trajectories", "export", "--format", "parquet", "--layout", "episodes-nested", src, "--out", nested]).then(async (e) => [e, e.code === 0 ? await farm(["trajectories", "query", "SELECT episode_id, len(screenshots) AS screens, len(actions) AS actions FROM trajectories ORDER BY 1", nested, "--json"]) : undefined] as const),
      farm(["trajectories", "export", "--format", "parquet", src, "--out", flat]).then(() => farm(["trajectories", "query", sql, flat, "--json"])),
    ]);
    assert.equal(exp.code, 0, exp.stderr);
    assert.match(exp.stderr, /"layout":"episodes-nested"/, "the one log line names the layout");
    const rows = nestedRows!.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(rows, recs.map((r) => ({ episode_id: r.episodeId, screens: 5, actions: 4 })));

    const goals = goalRows.stdout.trim().split("\n").map((l) => JSON.parse(l) as { goal: string; episodes: number; success_rate: number; invalid_action_rate: number });
    assert.equal(goals.reduce((n, g) => n + g.episodes, 0), 4);
    for (const g of goals) {
      const of = recs.filter((r) => r.goal === g.goal);
      assert.equal(g.success_rate, of.filter((r) => r.totalReward > 0).length / of.length, g.goal);
      assert.equal(g.invalid_action_rate, of.reduce((n, r) => n + r.invalidActions!, 0) / of.reduce((n, r) => n + r.steps.length, 0));
    }
  });

  it("a folder that is not a data set and bad options give clear errors", async () => {
    const empty = await tempDir();
    const cases: Array<[string[], RegExp]> = [
      [["trajectories", "query", "SELECT 1", empty], /no manifest\.json/],
      [["trajectories", "export", "--format", "parquet", empty], /needs --out/],
      [["trajectories", "export", "--format", "orc", empty], /--format must be jsonl or parquet/],
      [["trajectories", "export", "--format", "parquet", "--layout", "rows", empty, "--out", path.join(empty, "ds")], /--layout must be steps or episodes-nested, got "rows"/],
    ];
    const results = await Promise.all(cases.map(([args]) => farmExit(args)));
    cases.forEach(([args, message], i) => {
      assert.notEqual(results[i]!.code, 0, args.join(" "));
      assert.match(results[i]!.stderr, message);
    });
  });
});
