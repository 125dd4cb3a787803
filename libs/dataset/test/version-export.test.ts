/**
 * Policy versions (issue 38) in the data set: the steps' `policy_version` and `policy_ms`, the episodes'
 * `first_policy_version`, `last_policy_version` and `stale`, in both layouts, read back with DuckDB; an episode whose
 * policy reported no versions has nulls.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticEpisode, type EpisodeRecord } from "@farm/trajectory";
import { exportParquet, queryDataset } from "@farm/dataset";
import { tempDir, writeAvro } from "./helpers.ts";

function versioned(): EpisodeRecord[] {
  const a = syntheticEpisode(0, { campaignId: "camp-v", episodeIndex: 0, steps: 3 });
  a.steps = a.steps.map((s, i) => ({ ...s, policyVersion: String(4 + i), policyMs: 10 + i }));
  const b = syntheticEpisode(1, { campaignId: "camp-v", episodeIndex: 1, steps: 2 });
  b.steps = b.steps.map((s) => ({ ...s, policyVersion: "ckpt-b", policyMs: 2.5 }));
  const c = syntheticEpisode(2, { campaignId: "camp-v", episodeIndex: 2, steps: 2 });
  return [
    { ...a, firstPolicyVersion: "4", lastPolicyVersion: "6", stale: "versions span 2 > max staleness 1 (4 .. 6)" },
    { ...b, firstPolicyVersion: "ckpt-b", lastPolicyVersion: "ckpt-b" },
    c,
  ];
}

describe("policy versions in the data set", () => {
  for (const layout of ["steps", "episodes-nested"] as const) {
    it(`${layout}: per-step versions and policy time, first/last version and stale per episode`, async () => {
      const src = await tempDir();
      const out = await tempDir();
      await writeAvro(src, "w", versioned());
      await exportParquet([src], out, { layout });
      const eps = await queryDataset(out, "SELECT episode_index, first_policy_version, last_policy_version, stale FROM episodes ORDER BY episode_index");
      assert.deepEqual(
        eps.rows.map((r) => [Number(r.episode_index), r.first_policy_version, r.last_policy_version, r.stale]),
        [[0, "4", "6", "versions span 2 > max staleness 1 (4 .. 6)"], [1, "ckpt-b", "ckpt-b", null], [2, null, null, null]],
      );
      if (layout === "steps") {
        const steps = await queryDataset(out, "SELECT episode_id, step_index, policy_version, policy_ms FROM steps ORDER BY episode_id, step_index");
        assert.deepEqual(
          steps.rows.map((r) => [r.policy_version, r.policy_ms]),
          [["4", 10], ["5", 11], ["6", 12], ["ckpt-b", 2.5], ["ckpt-b", 2.5], [null, null], [null, null]],
        );
        // What a learner's filter asks: the steps of episodes that are not stale.
        const fresh = await queryDataset(out, "SELECT count(*) AS n FROM steps JOIN episodes USING (episode_id) WHERE stale IS NULL");
        assert.equal(Number(fresh.rows[0]!.n), 4);
      } else {
        const t = await queryDataset(out, "SELECT policy_versions, policy_ms, stale FROM trajectories ORDER BY episode_id");
        assert.deepEqual(
          t.rows.map((r) => [[...(r.policy_versions as unknown[])], [...(r.policy_ms as unknown[])], r.stale === null]),
          [[["4", "5", "6"], [10, 11, 12], false], [["ckpt-b", "ckpt-b"], [2.5, 2.5], true], [[null, null], [null, null], true]],
        );
      }
    });
  }
});
