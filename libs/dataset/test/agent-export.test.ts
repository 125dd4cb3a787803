/**
 * GUI-agent data sets: synthetic agent episodes (goal, trees, UI actions, usage extras, initial frame) and
 * a schema v2 file exported in both layouts, read back with DuckDB and hyparquet, the card's YAML with
 * Debian's python3-yaml, and the README's example queries answered from the input.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { episodeSchema, listTrajectoryFiles, readTrajectories, syntheticEpisode, type EpisodeRecord, type StoredEpisode } from "@farm/trajectory";
import { exportParquet, queryDataset } from "@farm/dataset";
import { readManifest } from "@farm/dataset/testing";
import { duckdb, featureOf, hyparquetRows, hyparquetSchema, parquetFiles, sqlList, tempDir, writeAvro } from "./helpers.ts";

/** Agent episodes with a frame and a tree on every step and initially. */
function agentEpisodes(n: number): EpisodeRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    ...syntheticEpisode(i, { campaignId: "camp-agent", episodeIndex: i, steps: 5 + (i % 4), frames: true, agent: true }),
    frameEvery: 1,
  }));
}

/** The v2 schema (today's without the fields v3 added), to write a file as a v2 writer did. */
function v2Schema(): typeof episodeSchema {
  const s = structuredClone(episodeSchema);
  const v3 = ["goal", "a11yEvery", "initialFrame", "initialA11y", "agentStatus", "answer", "invalidActions", "params", "success", "checks", "scoreError"];
  s.fields = s.fields.filter((f) => !v3.includes(f.name));
  const step = (s.fields.find((f) => f.name === "steps")!.type as { items: typeof episodeSchema }).items;
  step.fields = step.fields.filter((f) => f.name !== "a11y" && f.name !== "ui");
  return s;
}

/** A v2 file as a v2 writer made it: our records, resolved into the v2 schema and written by python3-avro. */
async function writeV2(file: string, records: EpisodeRecord[]): Promise<void> {
  const tmp = await tempDir();
  await writeAvro(tmp, "v3", records);
  const { files } = await listTrajectoryFiles([tmp]);
  const schemaFile = path.join(tmp, "v2.avsc");
  await writeFile(schemaFile, JSON.stringify(v2Schema()));
  const script = `
import sys, avro.schema
from avro.datafile import DataFileReader, DataFileWriter
from avro.io import DatumReader, DatumWriter
v2 = avro.schema.parse(open(sys.argv[2]).read())
with DataFileReader(open(sys.argv[1], "rb"), DatumReader(readers_schema=v2)) as r, DataFileWriter(open(sys.argv[3], "wb"), DatumWriter(), v2, codec="deflate") as w:
    w.set_meta("farm.schema.version", b"2")
    for x in r:
        x["schemaVersion"] = 2
        w.append(x)
`;
  execFileSync("/usr/bin/python3", ["-c", script, files[0]!, schemaFile, file]);
  await rm(tmp, { recursive: true, force: true });
}

async function readAll(dir: string): Promise<StoredEpisode[]> {
  const out: StoredEpisode[] = [];
  for await (const e of readTrajectories(dir)) out.push(e);
  return out;
}

const hex = (f: Uint8Array | undefined | null) => (f ? Buffer.from(f).toString("hex").toUpperCase() : null);
/** The screens of an episode: 0 = initial, i = after step i. */
const framesOf = (e: StoredEpisode) => [e.initialFrame, ...e.steps.map((s) => s.frame)];
const treesOf = (e: StoredEpisode) => [e.initialA11y, ...e.steps.map((s) => s.a11y)];
const actionOf = (s: StoredEpisode["steps"][number]) => s.ui?.given ?? JSON.stringify({ action_type: s.action.actionType, touch_position: [...s.action.touchPosition] });

function cardYaml(card: string): { configs: { config_name: string; default?: boolean; data_files: { path: string }[] }[]; dataset_info: { config_name: string; features: unknown[] }[] } {
  const yaml = card.split("\n---\n")[0]!.replace(/^---\n/, "");
  return JSON.parse(execFileSync("/usr/bin/python3", ["-c", "import sys, json, yaml; print(json.dumps(yaml.safe_load(sys.stdin.read())))"], { input: yaml, encoding: "utf8" }));
}

/** The card's front matter (python3-yaml) matches the files' schema, and its tables describe every column. */
async function checkCard(out: string, dataConfig: string): Promise<void> {
  const card = await readFile(path.join(out, "README.md"), "utf8");
  const parsed = cardYaml(card);
  assert.deepEqual(parsed.configs.map((c) => [c.config_name, c.default ?? false, c.data_files[0]!.path]), [[dataConfig, true, "data/train-*"], ["episodes", false, "episodes/train-*"]]);
  for (const [config, table] of [[dataConfig, "data"], ["episodes", "episodes"]] as const) {
    const info = parsed.dataset_info.find((d) => d.config_name === config)!;
    const tree = await hyparquetSchema((await parquetFiles(out, table))[0]!);
    assert.deepEqual(info.features, tree.children.map(featureOf), `${config}: card features differ from the Parquet schema`);
    for (const c of tree.children) assert.match(card, new RegExp(`\\| \`${c.element.name}\` \\| \\S`), `${config}: the card does not describe ${c.element.name}`);
  }
}

describe("GUI-agent data sets", () => {
  let src = "";
  let input: StoredEpisode[] = [];
  const v2Ids = ["camp-v2-0", "camp-v2-1"];

  it("steps layout: goal, elements, tree, action given/resolved/invalid and the screenshot of the screen each action was chosen on", async () => {
    src = await tempDir();
    await writeAvro(src, "agent", agentEpisodes(9), 4);
    await writeV2(path.join(src, "v2.avro"), [0, 1].map((i) => ({ ...syntheticEpisode(i + 20, { campaignId: "camp-v2", episodeIndex: i, steps: 4, frames: true }), frameEvery: 2 })));
    input = await readAll(src);
    assert.equal(input.length, 11);
    assert.deepEqual(input.filter((e) => e.schemaVersion === 2).map((e) => e.episodeId).sort(), v2Ids, "the v2 file reads as v2");
    const out = path.join(await tempDir(), "ds");
    const report = await exportParquet([src], out);
    assert.deepEqual([report.episodes, report.invalidEpisodes, report.corruptFiles], [11, [], []]);
    const frames = input.reduce((n, e) => n + framesOf(e).filter(Boolean).length, 0);
    assert.equal(report.frames, frames);

    const steps = await parquetFiles(out, "data");
    const rows = await duckdb(
      `SELECT episode_id, step_index, goal, action_type, action_json, action_resolved, action_invalid, elements, a11y_tree, to_hex(screenshot.bytes) AS shot,
              extra_policy_prompt_tokens::VARCHAR AS prompt, extra_policy_latency_ms AS latency
       FROM read_parquet(${sqlList(steps)}) ORDER BY episode_id, step_index`,
    );
    const byKey = new Map(rows.map((r) => [`${String(r.episode_id)}#${String(r.step_index)}`, r]));
    assert.equal(byKey.size, report.steps);
    let shots = 0;
    for (const e of input) {
      const screens = framesOf(e);
      const trees = treesOf(e);
      e.steps.forEach((s, i) => {
        const r = byKey.get(`${e.episodeId}#${s.index}`)!;
        const where = `${e.episodeId} step ${s.index}`;
        assert.equal(r.goal, e.goal || null, where);
        assert.equal(r.action_json, actionOf(s), where);
        assert.deepEqual(r.action_resolved === null ? null : JSON.parse(r.action_resolved as string), s.ui?.resolved ?? null, where);
        assert.equal(r.action_invalid, s.ui?.invalid ?? null, where);
        // BEFORE the action: the screen recorded after step k−1, the initial one for step 1.
        assert.equal(r.shot, hex(screens[i]), where);
        if (r.shot) shots++;
        assert.deepEqual(r.elements === null ? null : JSON.parse(r.elements as string), trees[i]?.elements ?? null, where);
        assert.equal(r.a11y_tree, trees[i]?.tree ?? null, where);
        const prompt = s.extras.find((x) => x.name === "policy_prompt_tokens");
        assert.equal(r.prompt, prompt ? `[${String(prompt.value)}]` : null, where);
      });
    }
    assert.ok(shots > 0 && rows.some((r) => r.action_invalid !== null) && rows.some((r) => r.action_resolved !== null));
    // v2 episodes: no goal, no trees, touch actions as JSON, screenshots shifted (no initial frame).
    const v2 = rows.filter((r) => v2Ids.includes(r.episode_id as string));
    assert.equal(v2.length, 8);
    assert.ok(v2.every((r) => r.goal === null && r.elements === null && r.action_resolved === null && JSON.parse(r.action_json as string).touch_position.length === 2));

    const eps = await duckdb(
      `SELECT episode_id, goal, agent_status, answer, invalid_actions, a11y_every, to_hex(final_screenshot.bytes) AS final_shot, final_elements, final_a11y_tree
       FROM read_parquet(${sqlList(await parquetFiles(out, "episodes"))}) ORDER BY episode_id`,
    );
    const sorted = [...input].sort((a, b) => (a.episodeId < b.episodeId ? -1 : 1));
    assert.deepEqual(
      eps.map((r) => [r.episode_id, r.goal, r.agent_status, r.answer, r.invalid_actions, r.a11y_every, r.final_shot, r.final_elements === null ? null : JSON.parse(r.final_elements as string), r.final_a11y_tree]),
      sorted.map((e) => [e.episodeId, e.goal || null, e.agentStatus ?? null, e.answer ?? null, e.invalidActions ?? 0, e.a11yEvery ?? 0, hex(e.steps.at(-1)!.frame), e.steps.at(-1)!.a11y?.elements ?? null, e.steps.at(-1)!.a11y?.tree ?? null]),
    );
    assert.ok(eps.some((r) => r.agent_status === "complete") && eps.some((r) => r.answer !== null));
    await checkCard(out, "steps");
    assert.equal((await readManifest(out))!.layout, "steps");
  });

  it("the README's queries: success rate per goal, invalid-action rate, tokens per episode", async () => {
    const out = path.join(await tempDir(), "ds");
    await exportParquet([src], out);
    const agent = input.filter((e) => e.goal);
    const perGoal = await queryDataset(out, "SELECT goal, count(*) AS episodes, avg((episode_return > 0)::INT) AS success_rate, avg((agent_status = 'complete')::INT) AS claimed_complete FROM episodes WHERE goal IS NOT NULL GROUP BY goal ORDER BY goal");
    const goals = [...new Set(agent.map((e) => e.goal!))].sort();
    assert.deepEqual(
      perGoal.rows.map((r) => [r.goal, r.episodes, r.success_rate]),
      goals.map((g) => {
        const of = agent.filter((e) => e.goal === g);
        return [g, of.length, of.filter((e) => e.totalReward > 0).length / of.length];
      }),
    );
    const invalid = await queryDataset(out, "SELECT policy_name, sum(invalid_actions) AS invalid, sum(step_count) AS steps, sum(invalid_actions) / sum(step_count) AS invalid_rate FROM episodes GROUP BY 1 ORDER BY 1");
    const llm = invalid.rows.find((r) => r.policy_name === "llm")!;
    const invalidTotal = agent.reduce((n, e) => n + e.invalidActions!, 0);
    const stepTotal = agent.reduce((n, e) => n + e.steps.length, 0);
    assert.deepEqual([llm.invalid, llm.steps, llm.invalid_rate], [invalidTotal, stepTotal, invalidTotal / stepTotal]);
    const stepRate = await queryDataset(out, "SELECT avg((action_invalid IS NOT NULL)::INT) AS rate FROM steps WHERE goal IS NOT NULL");
    assert.equal(stepRate.rows[0]!.rate, invalidTotal / stepTotal);
    const tokens = await queryDataset(out, "SELECT episode_id, sum(list_sum(extra_policy_prompt_tokens) + list_sum(extra_policy_completion_tokens)) AS tokens FROM steps GROUP BY 1 HAVING tokens IS NOT NULL ORDER BY 1");
    assert.deepEqual(
      tokens.rows.map((r) => [r.episode_id, r.tokens]),
      [...agent].sort((a, b) => (a.episodeId < b.episodeId ? -1 : 1)).map((e) => [e.episodeId, e.steps.reduce((n, s) => n + s.extras.filter((x) => x.name.endsWith("_tokens")).reduce((m, x) => m + (x.value as number), 0), 0)]),
    );
  });

  it("episodes-nested layout: one row per episode, screenshots[i] is what actions[i] was chosen on, plus the final screen", async () => {
    const out = path.join(await tempDir(), "nested");
    const report = await exportParquet([src], out, { layout: "episodes-nested" });
    assert.equal(report.episodes, 11);
    const data = await parquetFiles(out, "data");
    const rows = await duckdb(
      `SELECT episode_id, goal, agent_status, answer, invalid_actions, step_count, [to_hex(x.bytes) FOR x IN screenshots] AS shots, elements, accessibility_trees, actions, actions_resolved, actions_invalid, rewards
       FROM read_parquet(${sqlList(data)}) ORDER BY episode_id`,
    );
    const sorted = [...input].sort((a, b) => (a.episodeId < b.episodeId ? -1 : 1));
    assert.equal(rows.length, sorted.length);
    rows.forEach((r, k) => {
      const e = sorted[k]!;
      const n = e.steps.length;
      assert.deepEqual([r.episode_id, r.goal, r.agent_status, r.answer, r.invalid_actions, r.step_count], [e.episodeId, e.goal || null, e.agentStatus ?? null, e.answer ?? null, e.invalidActions ?? 0, n]);
      assert.deepEqual(r.shots, framesOf(e).map(hex), e.episodeId);
      assert.equal((r.shots as unknown[]).length, n + 1);
      assert.deepEqual((r.elements as (string | null)[]).map((x) => (x === null ? null : JSON.parse(x))), treesOf(e).map((t) => t?.elements ?? null));
      assert.deepEqual(r.accessibility_trees, treesOf(e).map((t) => t?.tree ?? null));
      assert.deepEqual(r.actions, e.steps.map(actionOf));
      assert.deepEqual((r.actions_resolved as (string | null)[]).map((x) => (x === null ? null : JSON.parse(x))), e.steps.map((s) => s.ui?.resolved ?? null));
      assert.deepEqual(r.actions_invalid, e.steps.map((s) => s.ui?.invalid ?? null));
      assert.deepEqual(r.rewards, e.steps.map((s) => s.reward));
    });
    // hyparquet (a second reader) sees the same list of images.
    const hy = await hyparquetRows(data);
    const first = hy.find((r) => r.episode_id === sorted[0]!.episodeId)!;
    const images = first.screenshots as ({ bytes: Uint8Array } | null)[];
    assert.deepEqual(images.map((x) => (x?.bytes ? hex(x.bytes) : null)), framesOf(sorted[0]!).map(hex));

    const m = (await readManifest(out))!;
    assert.equal(m.layout, "episodes-nested");
    assert.equal(m.shards.reduce((n, s) => n + s.rows, 0), 11, "one data row per episode");
    await checkCard(out, "trajectories");
    const q = await queryDataset(out, "SELECT count(*) AS n, sum(len(actions)) AS actions FROM trajectories");
    assert.deepEqual(q.rows.map((r) => ({ ...r })), [{ n: 11, actions: report.steps }]);
    await assert.rejects(exportParquet([src], out, { incremental: true }), /holds the episodes-nested layout; pass --layout episodes-nested/);
    await assert.rejects(exportParquet([src], path.join(out, "x"), { layout: "rows" as never }), /layout must be steps or episodes-nested/);
  });

  it("a campaign of a touch policy still gets the policy usage columns (null), so agent episodes can be added later", async () => {
    const plain = await tempDir();
    await writeAvro(plain, "p", [syntheticEpisode(1, { campaignId: "camp-p", episodeIndex: 1, steps: 3 })]);
    const out = path.join(await tempDir(), "ds");
    await exportParquet([plain], out);
    const cols = (await hyparquetSchema((await parquetFiles(out, "data"))[0]!)).children.map((c) => c.element.name);
    for (const c of ["extra_policy_prompt_tokens", "extra_policy_completion_tokens", "extra_policy_latency_ms", "extra_policy_attempts"]) assert.ok(cols.includes(c), c);
    await writeAvro(plain, "q", agentEpisodes(2).map((e, i) => ({ ...e, campaignId: "camp-q", episodeIndex: i, episodeId: `camp-q-${i}` })));
    const more = await exportParquet([plain], out, { incremental: true });
    assert.deepEqual([more.episodes, more.invalidEpisodes], [2, []]);
    const [t] = (await queryDataset(out, "SELECT sum(list_sum(extra_policy_prompt_tokens))::INTEGER AS t FROM steps")).rows;
    assert.ok((t!.t as number) > 0);
  });
});
