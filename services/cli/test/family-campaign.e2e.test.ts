/**
 * A task family as a campaign on workers (issue 41): `farm submit <family>` against a local farm's HTTP API, the
 * worker builds each episode's task instance (parameters drawn from the episode's seed, or fixed by a goals line),
 * the Settings app's Wi-Fi switch is tapped by the family's UI solution, and the committed records carry the success
 * the checks read from the device, the parameters and each check's observed value; the score metric counts them.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { LocalFarm } from "@farm/local-farm";
import { readTrajectories, type StoredEpisode } from "@farm/trajectory";
import { pollUntil } from "@farm/time";
import { REPO, runFarm } from "./fixtures.ts";
import { startFamilyFarm } from "./family-farm.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-family-campaign-"));
const out = path.join(dir, "out");
const FAMILY = path.join(REPO, "tasks/families/settings_wifi_set.family.yaml");
let farm: LocalFarm;

before(async () => {
  farm = await startFamilyFarm({ familyPath: FAMILY, devices: 2, outDir: out, queuePrefix: "{family-campaign}", service: "family-campaign-test" });
});

after(async () => {
  await farm?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test("farm submit of a family: every episode scored 1 from the device's state, params drawn or fixed, checks recorded", async () => {
  const goals = path.join(dir, "goals.jsonl");
  fs.writeFileSync(goals, `{"params": {"state": "off"}}\n{"goal": "Please switch Wi-Fi on", "params": {"state": "on"}}\n`);
  const r = await runFarm(["submit", FAMILY, "--api", farm.schedulerService!.http.url, "--episodes", "4", "--policy", "scripted:settings_wifi_set.ui.jsonl", "--goals", goals, "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const id = JSON.parse(r.stdout).campaign.id as string;
  const st = await pollUntil(async () => {
    const s = await farm.scheduler.status(id);
    return s.state === "running" ? undefined : s;
  }, { timeoutMs: 150_000, intervalMs: 200 });
  assert.ok(st, `campaign ${id} finished within 150 s`);
  assert.equal(st.state, "completed", JSON.stringify(st.summary));

  const episodes: StoredEpisode[] = [];
  for await (const e of readTrajectories(out)) if (e.campaignId === id) episodes.push(e);
  assert.equal(episodes.length, 4);
  for (const e of episodes.sort((a, b) => a.episodeIndex - b.episodeIndex)) {
    const state = e.episodeIndex % 2 === 0 ? "off" : "on";
    assert.equal(e.params?.state, state, `episode ${e.episodeIndex}: the goals line's fixed parameter`);
    assert.equal(e.params?.wifi_value, state === "on" ? "1" : "0", "the parameters derived from it");
    assert.equal(e.goal, e.episodeIndex % 2 === 0 ? "Turn Wi-Fi off." : "Please switch Wi-Fi on", "the rendered template, or the line's own goal");
    assert.equal(e.success, 1, `episode ${e.episodeIndex}: ${JSON.stringify(e.checks)} ${e.scoreError ?? ""}`);
    assert.deepEqual(e.checks?.map((c) => [c.passed, c.observed]), [[true, state === "on" ? "1" : "0"]]);
    assert.equal(e.totalReward, 1);
  }
  const metrics = await farm.worker.metrics.registry.metrics();
  assert.match(metrics, /farm_episode_scores_total\{[^}]*task="settings_wifi_set"[^}]*result="success"[^}]*\} 4/);
});
