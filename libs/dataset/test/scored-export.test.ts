/**
 * Scored episodes (issue 41) in the data set: `success`, `params` (JSON), `checks` (a list of structs) and
 * `score_error` in `episodes` and in the episodes-nested layout, read back with DuckDB through `queryDataset`;
 * an episode without a task instance has nulls and no checks.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticEpisode, type EpisodeRecord } from "@farm/trajectory";
import { exportParquet, queryDataset } from "@farm/dataset";
import { tempDir, writeAvro } from "./helpers.ts";

function scored(): EpisodeRecord[] {
  // Seeds 0..5: 1 and 5 fail (success 0), 4 is a score error, the rest succeed; 6 has no instance.
  return [...Array.from({ length: 6 }, (_, i) => syntheticEpisode(i, { campaignId: "camp-s", episodeIndex: i, steps: 3, scored: true })), syntheticEpisode(6, { campaignId: "camp-s", episodeIndex: 6, steps: 2 })];
}

describe("scored episodes in the data set", () => {
  for (const layout of ["steps", "episodes-nested"] as const) {
    it(`${layout}: success, params, checks and score_error, queried with DuckDB`, async () => {
      const src = await tempDir();
      const out = await tempDir();
      const recs = scored();
      await writeAvro(src, "w", recs);
      await exportParquet([src], out, { layout });
      for (const table of layout === "steps" ? ["episodes"] : ["episodes", "trajectories"]) {
        const q = await queryDataset(out, `SELECT episode_id, success, params, checks, score_error FROM ${table} ORDER BY episode_id`);
        assert.deepEqual(
          q.rows.map((r) => [r.success, r.params === null ? null : JSON.parse(r.params as string), r.score_error]),
          recs.map((e) => [e.success ?? null, e.params ? { ...e.params } : null, e.scoreError ?? null]),
          table,
        );
        const checks = q.rows.map((r) => (r.checks as Record<string, unknown>[]).map((c) => ({ ...c })));
        assert.deepEqual(checks[0], recs[0]!.checks!.map((c) => ({ ...c, error: null })));
        assert.deepEqual(checks[4]!.map((c) => [c.name, c.passed, c.error]), [["notes", false, "no database at /data/data/com.farm.simapps.todo/databases/todo.db"]]);
        assert.deepEqual(checks[6], []);
      }
      // What a training filter asks: successes per task, and the checks that failed.
      const rate = await queryDataset(out, "SELECT task_id, count(*) FILTER (WHERE success = 1) AS successes, count(*) FILTER (WHERE score_error IS NOT NULL) AS errors, count(success) AS scored FROM episodes GROUP BY 1");
      assert.deepEqual(rate.rows.map((r) => [r.successes, r.errors, r.scored]), [[3, 1, 5]]);
      const failed = await queryDataset(out, "SELECT episode_id, c.name AS check_name, c.observed FROM episodes, unnest(checks) AS t(c) WHERE NOT c.passed ORDER BY 1, 2");
      assert.deepEqual(failed.rows.map((r) => [r.check_name, r.observed]), [["wifi", "2"], ["notes", ""], ["wifi", "2"]]);
    });
  }
});
