/**
 * `farm bench rollouts [--devices 8] [--groups 4] [--group-size 8] [--profile instant]`: GRPO-style rollouts as a
 * learner sees them (issue 38). Simulated emulators run a grouped campaign of the Wi-Fi family (every task instance
 * K times) with a scripted stand-in policy: it solves the task or gives up at once, drawn per episode, so groups
 * carry signal, and each answer carries a policy version that changes every 2 s. A learner reads the campaign's
 * stream of committed episodes through a consumer group while the campaign runs.
 * Figures: whole groups per second; a group's spread (first to last commit of its members); stream lag (commit to
 * the consumer's receipt); duplicates (an episode received twice) and missing ones (committed, never received).
 * Last line: `groups_s= group_spread_p50_ms= stream_lag_p99_ms= duplicates= missing=`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startLocalFarm } from "@farm/local-farm";
import { createLogger } from "@farm/log";
import { EpisodeStreamConsumer, createRedisClient } from "@farm/queue";
import { readTrajectories } from "@farm/trajectory";
import { intOpt, profileOpt } from "./options.ts";
import { REPO } from "./policy-farm.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { simChildDevices } from "./sim-child.ts";
import { quantile } from "./stats.ts";

/**
 * The stand-in learner's policy (a module policy, loaded by the worker): the Wi-Fi family's UI solution, or a give-up,
 * drawn at random per episode (a sampling policy: members of a group differ); every answer names the version of "the weights" (the 2-second period).
 */
const STAND_IN = `
const SOLVE = [{ action_type: "click", index: 2 }, { action_type: "click", index: 2 }, { action_type: "click", x: 180, y: 84 }, { action_type: "status", goal_status: "complete" }];
export function createPolicy() {
  let plan = [];
  let i = 0;
  return {
    name: "rollout-stand-in",
    needsPixels: false,
    needsElements: true,
    reset(ctx) {
      plan = Math.random() < 0.5 ? SOLVE : [{ action_type: "status", goal_status: "complete" }];
      i = 0;
    },
    act() {
      const action = plan[Math.min(i++, plan.length - 1)];
      return { action, version: "v" + Math.floor(Date.now() / 2000) };
    },
  };
}
`;

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const devices = intOpt(opts, "devices", 8);
    const groups = intOpt(opts, "groups", 4);
    const K = intOpt(opts, "group-size", 8, 1, 256);
    const profile = profileOpt(opts);
    const out = (line: string) => process.stdout.write(`${line}\n`);
    const logger = createLogger({ service: "bench-rollouts", level: "warn" });
    const tmp = mkdtempSync(path.join(os.tmpdir(), "farm-bench-rollouts-"));
    const policyDir = path.join(tmp, "policies");
    const outDir = path.join(tmp, "out");
    const prefix = "{rollouts}";
    try {
      await import("node:fs/promises").then((fs) => fs.mkdir(policyDir, { recursive: true }));
      writeFileSync(path.join(policyDir, "rollout_stand_in.policy.mjs"), STAND_IN);
      const farm = await startLocalFarm({
        devices: simChildDevices(devices, profile),
        taskPaths: [path.join(REPO, "tasks/families/settings_wifi_set.family.yaml")],
        outDir,
        queuePrefix: prefix,
        logger,
        worker: { policyDir, episode: { settleMs: 20 } },
        bindTimeoutMs: 180_000,
        scheduler: { http: true, tickMs: 100, windowSize: Math.max(devices, K) },
      });
      const reader = createRedisClient(farm.redisUrl);
      try {
        const api = farm.schedulerService!.http.url;
        const episodes = groups * K;
        const id = "bench-rollouts";
        const t0 = Date.now();
        const body = { id, taskId: "settings_wifi_set", episodes, groupSize: K, policy: "module:rollout_stand_in.policy.mjs", options: { maxEpisodeSteps: 10 } };
        const post = await fetch(`${api}/campaigns`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        if (post.status !== 201) throw new Error(`submit: HTTP ${post.status} ${await post.text()}`);
        // The learner: one consumer of the consumer group "learner", reading while the campaign runs.
        const consumer = EpisodeStreamConsumer.forCampaign(reader, prefix, id, "learner", "bench");
        const seen = new Map<string, number>();
        const lags: number[] = [];
        const commits = new Map<number, number[]>();
        let duplicates = 0;
        let lastGroupAt = t0;
        const deadline = t0 + 10 * 60_000;
        let finishedAt: number | undefined;
        while (Date.now() < deadline) {
          const entries = await consumer.read(100, 200);
          const now = Date.now();
          for (const e of entries) {
            const m = e.message;
            if (!m) continue;
            if (seen.has(m.episodeId)) duplicates++;
            seen.set(m.episodeId, (seen.get(m.episodeId) ?? 0) + 1);
            lags.push(now - m.committedAtMs);
            if (m.groupIndex !== undefined) {
              const list = commits.get(m.groupIndex) ?? [];
              list.push(m.committedAtMs);
              commits.set(m.groupIndex, list);
              if (list.length === K) lastGroupAt = Math.max(lastGroupAt, Math.max(...list));
            }
          }
          await consumer.ack(entries.map((e) => e.id));
          if (finishedAt === undefined) {
            const st = (await (await fetch(`${api}/campaigns/${id}`)).json()) as { state: string };
            if (st.state !== "running") finishedAt = Date.now();
          } else if (entries.length === 0) break;
        }
        const st = (await (await fetch(`${api}/campaigns/${id}`)).json()) as { state: string; completed: number; groups?: { completed: number; uniform: number; meanStd: number | null } };
        const committed = new Set<string>();
        const versions = new Set<string>();
        for await (const e of readTrajectories(outDir)) {
          if (e.campaignId !== id) continue;
          committed.add(e.episodeId);
          for (const s of e.steps) if (s.policyVersion) versions.add(s.policyVersion);
        }
        const missing = [...committed].filter((e) => !seen.has(e)).length + Math.max(0, episodes - committed.size);
        const whole = [...commits.values()].filter((c) => c.length === K);
        const spreads = whole.map((c) => Math.max(...c) - Math.min(...c)).sort((a, b) => a - b);
        const sortedLags = lags.sort((a, b) => a - b);
        const wallSec = Math.max(0.001, (lastGroupAt - t0) / 1000);
        const f = (x: number, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");
        out(`farm bench rollouts: ${devices} simulated emulators (${profile}) on one worker host; ${groups} groups of ${K} (settings_wifi_set, a stand-in policy that solves or gives up per episode, its version changing every 2 s); one learner on the campaign's stream`);
        out(`campaign ${st.state}: ${st.completed}/${episodes} episodes, groups complete ${st.groups?.completed ?? 0} (uniform ${st.groups?.uniform ?? 0}, mean reward std ${st.groups?.meanStd?.toFixed(3) ?? "-"}), ${committed.size} committed records, policy versions seen in steps: ${versions.size}${versions.size === 0 ? " (steps do not record versions yet: the policy-versions work records them)" : ""}`);
        out(`stream: ${seen.size} episodes received, lag p50 ${f(quantile(sortedLags, 0.5))} ms, p99 ${f(quantile(sortedLags, 0.99))} ms; group spread p50 ${f(quantile(spreads, 0.5))} ms, max ${f(spreads[spreads.length - 1] ?? NaN)} ms`);
        out(`groups_s=${f(whole.length / wallSec, 3)} group_spread_p50_ms=${f(quantile(spreads, 0.5))} stream_lag_p99_ms=${f(quantile(sortedLags, 0.99))} duplicates=${duplicates} missing=${missing}`);
        if (duplicates > 0 || missing > 0) process.exitCode = 1;
      } finally {
        reader.disconnect();
        await farm.close();
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  },
};
