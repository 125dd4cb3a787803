/**
 * Settle time (issue 36, schema v5) through the trajectory and the data set: each step's `settleMs` / `settleCapped`
 * and the episode's `settle` spec written as Avro and read back, then exported (`steps`: settle_ms, settle_capped;
 * `episodes`: settle; the nested layout's lists) and queried with DuckDB. An episode without a policy has nulls.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readTrajectories, syntheticEpisode, type EpisodeRecord } from "@farm/trajectory";
import { exportParquet, queryDataset } from "@farm/dataset";
import { tempDir, writeAvro } from "./helpers.ts";

function settled(): EpisodeRecord[] {
  const a = syntheticEpisode(0, { campaignId: "camp-settle", episodeIndex: 0, steps: 3 });
  a.settle = "events:quiet=300,cap=6000";
  a.steps.forEach((s, i) => (s.settleMs = 100.5 * (i + 1)));
  a.steps[2]!.settleCapped = true;
  const b = syntheticEpisode(1, { campaignId: "camp-settle", episodeIndex: 1, steps: 2 });
  return [a, b];
}

describe("settle time in the trajectory and the data set", () => {
  it("Avro read back: per-step settleMs and settleCapped, the episode's settle", async () => {
    const src = await tempDir();
    await writeAvro(src, "w", settled());
    const back = [];
    for await (const e of readTrajectories([src])) back.push(e);
    back.sort((x, y) => x.episodeIndex - y.episodeIndex);
    assert.equal(back[0]!.settle, "events:quiet=300,cap=6000");
    assert.deepEqual(back[0]!.steps.map((s) => [s.settleMs, s.settleCapped ?? false]), [[100.5, false], [201, false], [301.5, true]]);
    assert.equal(back[1]!.settle, undefined);
    assert.deepEqual(back[1]!.steps.map((s) => s.settleMs), [undefined, undefined]);
  });
  for (const layout of ["steps", "episodes-nested"] as const) {
    it(`${layout}: settle columns, queried with DuckDB`, async () => {
      const src = await tempDir();
      const out = await tempDir();
      await writeAvro(src, "w", settled());
      await exportParquet([src], out, { layout });
      const eps = await queryDataset(out, "SELECT episode_index, settle FROM episodes ORDER BY episode_index");
      assert.deepEqual(eps.rows.map((r) => r.settle), ["events:quiet=300,cap=6000", null]);
      if (layout === "steps") {
        const q = await queryDataset(out, "SELECT episode_id, step_index, settle_ms, settle_capped FROM steps ORDER BY episode_id, step_index");
        assert.deepEqual(q.rows.map((r) => [r.settle_ms, r.settle_capped]), [[100.5, false], [201, false], [301.5, true], [null, false], [null, false]]);
        const p = await queryDataset(out, "SELECT quantile_cont(settle_ms, 0.5) AS p50, count(*) FILTER (WHERE settle_capped) AS capped FROM steps");
        assert.deepEqual([p.rows[0]!.p50, Number(p.rows[0]!.capped)], [201, 1]);
      } else {
        const q = await queryDataset(out, "SELECT settle, settle_ms, settle_capped FROM trajectories ORDER BY episode_id");
        assert.deepEqual(q.rows.map((r) => [r.settle, [...(r.settle_ms as number[])], [...(r.settle_capped as boolean[])]]), [
          ["events:quiet=300,cap=6000", [100.5, 201, 301.5], [false, false, true]],
          [null, [null, null], [false, false]],
        ]);
      }
    });
  }
});
