/**
 * The report's interval arithmetic against published values, its SQL against a plain DuckDB count, and the viewer's
 * two episode sources (Avro folder, Parquet data set) showing the same episodes, steps, screens and elements.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import { syntheticEpisode, type EpisodeRecord } from "@farm/trajectory";
import { evaluate, exportParquet, openAvroEpisodeSource, openDatasetEpisodeSource, rateDifference, wilsonInterval } from "@farm/dataset";
import { parquetFiles, tempDir, writeAvro } from "./helpers.ts";

const close = (a: number, b: number, tol = 5e-4) => Math.abs(a - b) <= tol;

test("Wilson and Newcombe intervals give the published values", () => {
  // Newcombe (1998), Stat Med 17:857-872: 81/263 → 0.2553–0.3662 (Wilson score); 56/70 vs 48/80 → 0.0524–0.3339 (method 10).
  const w = wilsonInterval(81, 263);
  assert.ok(close(w.low, 0.2553) && close(w.high, 0.3662), JSON.stringify(w));
  const z = wilsonInterval(0, 10);
  assert.ok(close(z.low, 0) && close(z.high, 0.2775), JSON.stringify(z));
  const d = rateDifference({ successes: 48, episodes: 80 }, { successes: 56, episodes: 70 });
  assert.ok(close(d.diff, 0.2, 1e-12) && close(d.low, 0.0524) && close(d.high, 0.3339) && d.differs, JSON.stringify(d));
  assert.equal(rateDifference({ successes: 5, episodes: 10 }, { successes: 6, episodes: 10 }).differs, false);
});

function agentEpisodes(campaignId: string, n: number, rewarded: (i: number) => boolean): EpisodeRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const e = syntheticEpisode(i + 1, { campaignId, episodeIndex: i, steps: 6, frames: true, agent: true, taskId: i % 2 ? "todo_a" : "todo_b" });
    for (const s of e.steps) s.reward = 0;
    e.steps.at(-1)!.reward = rewarded(i) ? 1 : 0;
    e.totalReward = e.steps.reduce((t, s) => t + s.reward, 0);
    return e;
  });
}

test("the report's numbers equal a DuckDB count; the viewer reads the same episodes from Avro and from the data set", async () => {
  const avro = await tempDir("eval-avro-");
  const ds = await tempDir("eval-ds-");
  await writeAvro(avro, "w1", [...agentEpisodes("good", 8, (i) => i !== 3), ...agentEpisodes("bad", 8, (i) => i === 0)]);
  await exportParquet([avro], ds, { compression: "snappy" });

  const ev = await evaluate({ paths: [ds], campaigns: ["bad"] }, { paths: [avro], campaigns: ["good"] });
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    const files = (await parquetFiles(ds, "episodes")).map((f) => `'${f}'`).join(", ");
    const plain = (await conn.runAndReadAll(`SELECT campaign_id, task_id, count(*)::INT AS n, count(*) FILTER (WHERE episode_return > 0)::INT AS k FROM read_parquet([${files}]) GROUP BY ALL ORDER BY ALL`)).getRowObjectsJS() as { campaign_id: string; task_id: string; n: number; k: number }[];
    const rows = [...ev.base.byTask, ...ev.other!.byTask];
    assert.equal(rows.length, plain.length);
    for (const p of plain) {
      const r = rows.find((x) => x.campaignId === p.campaign_id && x.taskId === p.task_id)!;
      const w = wilsonInterval(p.k, p.n);
      assert.deepEqual([r.episodes, r.successes], [p.n, p.k]);
      assert.ok(Math.abs(r.low - w.low) < 1e-12 && Math.abs(r.high - w.high) < 1e-12 && Math.abs(r.rate - w.rate) < 1e-12, `${p.campaign_id}/${p.task_id}`);
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  assert.ok(ev.base.byTask.every((r) => r.promptTokensPerStep !== null && r.latencyMsPerStep !== null), "usage per step from the policy_* extras");
  assert.equal(ev.differences!.length, 2);

  const a = await openAvroEpisodeSource([avro]);
  const d = await openDatasetEpisodeSource(ds);
  try {
    const la = await a.list({ campaign: "good" });
    const ld = await d.list({ campaign: "good" });
    assert.equal(la.total, 8);
    assert.deepEqual(ld.episodes, la.episodes);
    const id = la.episodes[0]!.id;
    const [ea, ed] = [(await a.episode(id))!, (await d.episode(id))!];
    assert.deepEqual(ed.screens, ea.screens);
    assert.equal(ed.reward, ea.reward);
    const pick = (s: (typeof ea.stepViews)[number]) => ({ index: s.index, reward: s.reward, resolved: s.resolved, invalid: s.invalid, action: s.invalid ? null : s.action });
    assert.deepEqual(ed.stepViews.map(pick), ea.stepViews.map(pick));
    assert.ok(ea.stepViews.some((s) => s.invalid), "an invalid step among them");
    for (let n = 0; n < ea.screens.length; n++) {
      const [ia, id2] = [await a.screenImage(id, n), await d.screenImage(id, n)];
      assert.deepEqual(id2 && Buffer.from(id2.bytes), ia && Buffer.from(ia.bytes), `screen ${n}'s frame`);
      const [xa, xd] = [await a.screenElements(id, n), await d.screenElements(id, n)];
      assert.deepEqual(xd, xa, `screen ${n}'s elements`);
    }
    assert.equal(await a.screenImage(id, ea.screens.length), undefined);
    assert.equal(await a.episode("nope-1"), undefined);
  } finally {
    a.close();
    d.close();
  }
});
