import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { readTrajectories, type StoredEpisode } from "@farm/trajectory";
import { exportParquet, queryDataset, type ExportReport } from "@farm/dataset";
import { readManifest } from "@farm/dataset/testing";
import { campaignEpisodes, duckdb, featureOf, hyparquetRows, hyparquetSchema, parquetFiles, sqlList, tempDir, writeAvro } from "./helpers.ts";

const SHARD = 1_000_000; // 1 MB shards: the input below needs several

async function avroEpisodes(dir: string): Promise<StoredEpisode[]> {
  const out: StoredEpisode[] = [];
  for await (const e of readTrajectories(dir)) out.push(e);
  return out;
}

/** What the steps table must hold for an extra: every value logged during the step, or null. */
function expectedExtra(e: StoredEpisode, stepIdx: number, name: string): unknown {
  const logged = e.steps[stepIdx]!.extras.filter((x) => x.name === name);
  if (logged.length === 0) return null;
  return logged.map((x) => (x.dtype === "OBJECT" ? JSON.stringify(x.value) : x.value));
}

/** hyparquet gives int64 as bigint, lists as arrays: normalise to numbers for comparing with Avro values. */
function plain(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === "bigint") return Number(v);
  if (Array.isArray(v)) return v.map(plain);
  return v;
}

describe("farm trajectories export --format parquet", () => {
  let src = "";
  let out = "";
  let report: ExportReport;
  let input: StoredEpisode[] = [];

  it("exports a campaign with frames and extras; skips a corrupt file by name", async () => {
    src = await tempDir();
    out = path.join(await tempDir(), "ds");
    await writeAvro(src, "w1", campaignEpisodes(24));
    input = await avroEpisodes(src);
    assert.equal(input.length, 24);
    const corrupt = path.join(src, "task=classic_2048", "broken.avro");
    await writeFile(corrupt, Buffer.concat([Buffer.from("Obj\x01"), Buffer.alloc(64, 7)]));
    report = await exportParquet([src], out, { shardBytes: SHARD });
    assert.equal(report.episodes, 24);
    assert.equal(report.steps, input.reduce((n, e) => n + e.steps.length, 0));
    assert.deepEqual(report.corruptFiles.map((f) => f.file), [corrupt]);
    assert.ok(report.shardsWritten >= 2, `expected several shards, got ${report.shardsWritten}`);
    assert.ok(report.peakRssMb > 0);
  });

  it("every shard is at most --shard-mb and named train-NNNNN-of-MMMMM", async () => {
    const files = await parquetFiles(out, "data");
    assert.equal(files.length, report.shardsTotal);
    files.forEach((f, i) => assert.equal(path.basename(f), `train-${String(i).padStart(5, "0")}-of-${String(files.length).padStart(5, "0")}.parquet`));
    for (const f of files) assert.ok((await stat(f)).size <= SHARD, `${f} is ${(await stat(f)).size} bytes`);
    assert.equal((await parquetFiles(out, "episodes")).length, files.length);
  });

  it("DuckDB reads back the Avro input exactly: counts, ids, rewards, extras, screenshots (the screen before each action)", async () => {
    const steps = await parquetFiles(out, "data");
    const eps = await parquetFiles(out, "episodes");
    const [counts] = await duckdb(`SELECT (SELECT count(*)::INTEGER FROM read_parquet(${sqlList(steps)})) AS steps, (SELECT count(*)::INTEGER FROM read_parquet(${sqlList(eps)})) AS episodes`);
    assert.deepEqual(counts, { steps: report.steps, episodes: 24 });
    const rows = await duckdb(
      `SELECT episode_id, step_index, reward, is_first, is_last, is_terminal, discount, extra_board, extra_score, extra_ticks::VARCHAR AS ticks, extra_info, to_hex(screenshot.bytes) AS frame_hex, goal, action_json, elements
       FROM read_parquet(${sqlList(steps)}) ORDER BY episode_id, step_index`,
    );
    const byKey = new Map(rows.map((r) => [`${String(r.episode_id)}#${String(r.step_index)}`, r]));
    assert.equal(byKey.size, report.steps);
    for (const e of input) {
      e.steps.forEach((s, i) => {
        const r = byKey.get(`${e.episodeId}#${s.index}`);
        assert.ok(r, `${e.episodeId} step ${s.index} missing`);
        assert.equal(r.reward, s.reward);
        assert.equal(r.is_first, i === 0);
        assert.equal(r.is_last, i === e.steps.length - 1);
        assert.equal(r.is_terminal, i === e.steps.length - 1 && e.outcome === "terminated");
        assert.equal(r.discount, r.is_terminal ? 0 : 1);
        assert.deepEqual(r.extra_board, expectedExtra(e, i, "board"));
        assert.deepEqual(r.extra_score, expectedExtra(e, i, "score"));
        assert.deepEqual(r.extra_info, expectedExtra(e, i, "info"));
        const ticks = expectedExtra(e, i, "ticks") as number[][] | null;
        assert.equal(r.ticks, ticks === null ? null : `[${ticks.map((t) => `[${t.join(", ")}]`).join(", ")}]`);
        // BEFORE: step k shows the frame recorded after step k−1; these episodes have no initial frame.
        const before = i === 0 ? e.initialFrame : e.steps[i - 1]!.frame;
        assert.equal(r.frame_hex, before ? Buffer.from(before).toString("hex").toUpperCase() : null);
        assert.deepEqual([r.goal, r.elements], [null, null]);
        assert.deepEqual(JSON.parse(r.action_json as string), { action_type: s.action.actionType, touch_position: [...s.action.touchPosition] });
      });
    }
    const epRows = await duckdb(`SELECT episode_id, episode_return, step_count, task_id, seed, outcome, reset_kind, to_hex(final_screenshot.bytes) AS final_hex, invalid_actions, goal FROM read_parquet(${sqlList(eps)}) ORDER BY episode_id`);
    const hex = (f: Uint8Array | undefined) => (f ? Buffer.from(f).toString("hex").toUpperCase() : null);
    assert.deepEqual(
      epRows.map((r) => [r.episode_id, r.episode_return, r.step_count, r.task_id, Number(r.seed), r.outcome, r.reset_kind, r.final_hex, r.invalid_actions, r.goal]),
      [...input].sort((a, b) => (a.episodeId < b.episodeId ? -1 : 1)).map((e) => [e.episodeId, e.totalReward, e.steps.length, e.taskId, e.seed, e.outcome, "steps", hex(e.steps.at(-1)!.frame), 0, null]),
    );
  });

  it("hyparquet (a second, independent Parquet reader) reads the same values", async () => {
    const rows = await hyparquetRows(await parquetFiles(out, "data"));
    assert.equal(rows.length, report.steps);
    const byEpisode = new Map(input.map((e) => [e.episodeId, e]));
    let frames = 0;
    for (const r of rows) {
      const e = byEpisode.get(r.episode_id as string)!;
      const i = (r.step_index as number) - 1;
      const s = e.steps[i]!;
      assert.equal(r.reward, s.reward);
      assert.deepEqual(r.touch_position, [...s.action.touchPosition]);
      assert.deepEqual(plain(r.extra_q_values), (expectedExtra(e, i, "q_values") as number[][] | null)?.map((q) => q.map(Math.fround)) ?? null);
      assert.deepEqual(plain(r.extra_ticks), expectedExtra(e, i, "ticks"));
      assert.deepEqual(plain(r.extra_direction), expectedExtra(e, i, "direction"));
      const frame = r.screenshot as { bytes: Uint8Array; path: string | null } | null | undefined;
      const before = i === 0 ? e.initialFrame : e.steps[i - 1]!.frame;
      if (before) {
        assert.ok(frame, `${e.episodeId} step ${s.index}: screenshot missing`);
        assert.ok(Buffer.from(frame.bytes).equals(Buffer.from(before)), `${e.episodeId} step ${s.index}: screenshot bytes differ`);
        frames++;
      } else assert.ok(frame === null || frame === undefined || frame.bytes == null);
    }
    const eps = await hyparquetRows(await parquetFiles(out, "episodes"));
    assert.deepEqual(eps.map((r) => r.episode_id).sort(), input.map((e) => e.episodeId).sort());
    for (const r of eps) {
      const last = byEpisode.get(r.episode_id as string)!.steps.at(-1)!;
      const final = r.final_screenshot as { bytes: Uint8Array } | null | undefined;
      if (last.frame) {
        assert.ok(final && Buffer.from(final.bytes).equals(Buffer.from(last.frame)), `${String(r.episode_id)}: final screenshot`);
        frames++;
      } else assert.ok(!final?.bytes);
    }
    assert.equal(frames, report.frames, "every recorded frame is stored exactly once");
  });

  it("the card's configs and features match the files' schema", async () => {
    const card = await readFile(path.join(out, "README.md"), "utf8");
    const yaml = card.split("\n---\n")[0]!.replace(/^---\n/, "");
    // Debian's python3-yaml parses the card's YAML front matter independently of our writer.
    const parsed = JSON.parse(execFileSync("/usr/bin/python3", ["-c", "import sys, json, yaml; print(json.dumps(yaml.safe_load(sys.stdin.read())))"], { input: yaml, encoding: "utf8" })) as {
      configs: { config_name: string; default?: boolean; data_files: { split: string; path: string }[] }[];
      dataset_info: { config_name: string; features: unknown[] }[];
    };
    assert.deepEqual(parsed.configs.map((c) => [c.config_name, c.default ?? false, c.data_files[0]!.path]), [["steps", true, "data/train-*"], ["episodes", false, "episodes/train-*"]]);
    for (const [config, table] of [["steps", "data"], ["episodes", "episodes"]] as const) {
      const info = parsed.dataset_info.find((d) => d.config_name === config)!;
      const tree = await hyparquetSchema((await parquetFiles(out, table))[0]!);
      assert.deepEqual(info.features, tree.children.map(featureOf), `${config}: card features differ from the Parquet schema`);
    }
  });

  it("the same input gives the same bytes", async () => {
    const again = path.join(await tempDir(), "ds");
    await exportParquet([src], again, { shardBytes: SHARD });
    for (const rel of ["README.md", "manifest.json", ...(await parquetFiles(out, "data")).map((f) => path.relative(out, f)), ...(await parquetFiles(out, "episodes")).map((f) => path.relative(out, f))]) {
      assert.ok((await readFile(path.join(out, rel))).equals(await readFile(path.join(again, rel))), `${rel} differs`);
    }
  });

  it("--incremental adds only the new episodes and renumbers the shard set", async () => {
    const before = await readManifest(out);
    await writeAvro(src, "w2", campaignEpisodes(6, 24));
    const r = await exportParquet([src], out, { shardBytes: SHARD, incremental: true });
    assert.equal(r.episodes, 6);
    assert.equal(r.alreadyExported, 24);
    const after = (await readManifest(out))!;
    assert.equal(after.shards.length, before!.shards.length + r.shardsWritten);
    const ids = after.shards.flatMap((s) => s.episodeIds);
    assert.equal(new Set(ids).size, 30);
    assert.equal(ids.length, 30);
    const files = await parquetFiles(out, "data");
    assert.ok(files.every((f) => f.endsWith(`-of-${String(after.shards.length).padStart(5, "0")}.parquet`)), files.join(" "));
    const [c] = await queryDataset(out, "SELECT count(*) AS n, count(DISTINCT episode_id) AS d FROM episodes").then((q) => q.rows);
    assert.deepEqual({ ...c }, { n: 30, d: 30 });
    const again = await exportParquet([src], out, { shardBytes: SHARD, incremental: true });
    assert.equal(again.episodes, 0);
    assert.equal((await readManifest(out))!.shards.length, after.shards.length);
  });

  it("refuses to overwrite a data set without --incremental", async () => {
    await assert.rejects(exportParquet([src], out, { shardBytes: SHARD }), /already holds a data set/);
  });
});

/** The Hugging Face feature (as the card's YAML parses) a Parquet schema node stands for. */
describe("shard size bound when the data changes from compressible to incompressible", () => {
  it("a shard predicted from a well-compressing previous shard is split until it fits", async () => {
    const src = await tempDir();
    const out = path.join(await tempDir(), "ds");
    // First episodes: the same few PNG frames over and over (zstd shrinks them); then distinct frames.
    const { syntheticEpisode } = await import("@farm/trajectory");
    const repeated = Array.from({ length: 12 }, (_, i) => ({ ...syntheticEpisode(i, { campaignId: "camp-r", episodeIndex: i, steps: 40, frames: true, frameSize: 96 }), frameEvery: 1 }));
    await writeAvro(src, "a", repeated, 100);
    await writeAvro(src, "b", campaignEpisodes(16, 0, "camp-z"), 100);
    const r = await exportParquet([src], out, { shardBytes: SHARD });
    assert.equal(r.episodes, 28);
    for (const f of await parquetFiles(out, "data")) assert.ok((await stat(f)).size <= SHARD, `${f} is ${(await stat(f)).size} bytes`);
    const [c] = await duckdb(`SELECT count(DISTINCT episode_id)::INTEGER AS n FROM read_parquet(${sqlList(await parquetFiles(out, "data"))})`);
    assert.equal(c!.n, 28);
  });
});

describe("an export that died while publishing", () => {
  it("is finished by the next run from manifest.json.pending", async () => {
    const src = await tempDir();
    const out = path.join(await tempDir(), "ds");
    await writeAvro(src, "w1", campaignEpisodes(4));
    await exportParquet([src], out, { shardBytes: SHARD });
    const before = (await readManifest(out))!;
    await writeAvro(src, "w2", campaignEpisodes(4, 4));
    await exportParquet([src], out, { shardBytes: SHARD, incremental: true });
    const after = (await readManifest(out))!;
    assert.ok(after.shards.length > before.shards.length);
    // Put the folder back into the state of a crash mid-publish: journal written, the first old shard
    // not yet renamed, the last new shard still under its temporary name, the old manifest in place.
    const { rename: mv, writeFile: wf } = await import("node:fs/promises");
    const first = after.shards[0]!;
    const last = after.shards.at(-1)!;
    const tmp = { steps: "data/.run2-9.parquet.tmp", episodes: "episodes/.run2-9.parquet.tmp" };
    await mv(path.join(out, first.steps), path.join(out, before.shards[0]!.steps));
    await mv(path.join(out, first.episodes), path.join(out, before.shards[0]!.episodes));
    await mv(path.join(out, last.steps), path.join(out, tmp.steps));
    await mv(path.join(out, last.episodes), path.join(out, tmp.episodes));
    const renames = [
      [before.shards[0]!.steps, first.steps], [before.shards[0]!.episodes, first.episodes],
      [tmp.steps, last.steps], [tmp.episodes, last.episodes],
    ];
    await wf(path.join(out, "manifest.json.pending"), JSON.stringify({ ...after, renames }));
    await wf(path.join(out, "manifest.json"), JSON.stringify(before));
    const r = await exportParquet([src], out, { shardBytes: SHARD, incremental: true });
    assert.equal(r.episodes, 0);
    assert.deepEqual(await readManifest(out), after);
    const names = [...(await parquetFiles(out, "data")), ...(await parquetFiles(out, "episodes"))].map((f) => path.relative(out, f)).sort();
    assert.deepEqual(names, after.shards.flatMap((s) => [s.steps, s.episodes]).sort());
    const [c] = (await queryDataset(out, "SELECT count(DISTINCT episode_id) AS n FROM steps")).rows;
    assert.equal(c!.n, 8);
  });
});

describe("episodes that fail validation and duplicates", () => {
  it("are skipped, counted and named; the rest is exported", async () => {
    const src = await tempDir();
    const out = path.join(await tempDir(), "ds");
    const good = campaignEpisodes(4);
    const broken = campaignEpisodes(1, 4)[0]!;
    broken.steps[2]!.index = 9; // steps must be numbered 1..n
    await writeAvro(src, "w1", [...good, broken]);
    const retry = { ...campaignEpisodes(1, 1)[0]!, attempt: 2 }; // the same id again, from a retry
    await writeAvro(src, "w2", [retry]);
    const r = await exportParquet([src], out, { shardBytes: SHARD });
    assert.equal(r.episodes, 4);
    assert.deepEqual(r.invalidEpisodes.map((e) => [e.episodeId, e.reason]), [["camp-a-4", "step 3 has index 9 (steps must be numbered 1..n)"]]);
    assert.deepEqual(r.duplicates.map((d) => d.episodeId), ["camp-a-1"]);
    const rows = (await queryDataset(out, "SELECT episode_id, attempt FROM episodes ORDER BY episode_id")).rows.map((x) => ({ ...x }));
    assert.deepEqual(rows, good.map((e) => ({ episode_id: e.episodeId, attempt: 1 })));
  });
});
