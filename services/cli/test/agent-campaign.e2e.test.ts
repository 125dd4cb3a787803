/**
 * A campaign with goals end to end (issue 28): `farm submit --goals FILE.jsonl --observe pixels,a11y` against a local
 * farm's HTTP API; each episode's policy (on the worker) is given its own goal, line i mod N, and element lists
 * although it never asked for them (a11y observed every step); the committed Avro records hold a frame every step.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger } from "@farm/log";
import { startLocalFarm, type LocalFarm } from "@farm/local-farm";
import { readTrajectories, type StoredEpisode } from "@farm/trajectory";
import { pollUntil } from "@farm/time";
import { startLlmStandIn } from "@farm/local-services";
import { REPO, runFarm } from "./fixtures.ts";

/** The stand-in model solves the notes task by the elements in its prompt (libs/local-services llm-stand-in-script.ts). */
const NOTES_SOLVER = [{ click_text: "NEW NOTE" }, { type_into: "title_input", text: "milk" }, { type_into: "body_input", text: "2 litres" }, { click_text: "SAVE" }];

const llm = await startLlmStandIn({ solver: NOTES_SOLVER });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-agent-campaign-"));
const policyDir = path.join(dir, "policies");
const seen = path.join(dir, "seen.jsonl");
const out = path.join(dir, "out");
const TODO = path.join(REPO, "tasks/todo_create_note.textproto");
let farm: LocalFarm;

/** Writes what each step was given (episode, goal, element count or -1) and lifts the finger. */
const OBSERVER = `import { appendFileSync } from "node:fs";
export function createPolicy() {
  let ctx;
  return {
    name: "observer",
    needsPixels: false,
    reset(c) { ctx = c; },
    act(obs) {
      appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ episode: ctx.episodeIndex, goal: obs.goal, elements: Array.isArray(obs.elements) ? obs.elements.length : -1 }) + "\\n");
      return { actionType: "LIFT", touchPosition: [0, 0] };
    },
  };
}
`;

before(async () => {
  fs.mkdirSync(policyDir);
  fs.writeFileSync(path.join(policyDir, "observer.mjs"), OBSERVER);
  farm = await startLocalFarm({
    devices: 2,
    taskPaths: [TODO],
    outDir: out,
    queuePrefix: "{agent-campaign}",
    logger: createLogger({ service: "agent-campaign-test", level: "error" }),
    environment: {},
    worker: { policyDir, episode: { settleMs: 20 } },
    bindTimeoutMs: 90_000,
    scheduler: { http: true, tickMs: 100 },
  });
});

after(async () => {
  await farm?.close();
  await llm.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const farmCli = (args: string[]) => runFarm(args);

const GOALS = [
  { goal: "Create a note titled eggs", game_config: { title: "eggs" } },
  { goal: "Create a note titled milk containing 2 litres" },
  { goal: "Find the note about the dentist" },
];

test("farm submit --goals --observe pixels,a11y: every episode runs with its own goal and records what it observed", async () => {
  const goalsFile = path.join(dir, "goals.jsonl");
  fs.writeFileSync(goalsFile, GOALS.map((g) => JSON.stringify(g)).join("\n") + "\n");
  const api = farm.schedulerService!.http.url;
  const r = await farmCli(["submit", TODO, "--api", api, "--episodes", "5", "--policy", "module:observer.mjs", "--max-steps", "3", "--goals", goalsFile, "--observe", "pixels,a11y", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const id = JSON.parse(r.stdout).campaign.id as string;
  assert.equal(JSON.parse(r.stdout).campaign.goals, 3);
  const st = await pollUntil(async () => {
    const s = await farm.scheduler.status(id);
    return s.state === "running" ? undefined : s;
  }, { timeoutMs: 120_000, intervalMs: 200 });
  assert.ok(st, `campaign ${id} finished within 120 s`);
  assert.equal(st.state, "completed", JSON.stringify(st.summary));
  assert.equal(st.completed, 5);

  // What the worker's runEpisode gave the policy, per episode.
  const steps = fs.readFileSync(seen, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { episode: number; goal: string; elements: number });
  for (let i = 0; i < 5; i++) {
    const mine = steps.filter((s) => s.episode === i);
    assert.ok(mine.length >= 3, `episode ${i} ran its steps`);
    for (const s of mine) {
      assert.equal(s.goal, GOALS[i % 3]!.goal, `episode ${i}'s goal is line ${i % 3}`);
      assert.ok(s.elements > 0, `episode ${i}: a11y observed every step gives elements to a policy that did not ask (${s.elements})`);
    }
  }

  // The committed records: one per episode, a frame on every step (pixels observed: --frame-every defaults to 1).
  const episodes: StoredEpisode[] = [];
  for await (const e of readTrajectories(out)) if (e.campaignId === id) episodes.push(e);
  assert.equal(episodes.length, 5);
  for (const e of episodes) {
    assert.equal(e.frameEvery, 1);
    assert.ok(e.steps.length > 0 && e.steps.every((s) => s.frame && s.frame.length > 0), `episode ${e.episodeIndex}: a frame every step`);
    assert.equal(e.goal, GOALS[e.episodeIndex % 3]!.goal);
    assert.ok(e.steps.every((s) => s.a11y !== undefined && s.a11y.elements.length > 0), "a11y on every step");
    assert.ok(e.initialA11y && e.initialFrame, "the screen the first action was chosen on");
  }
});

test("farm submit with a bad goals line fails naming file:line and the field, and submits nothing", async () => {
  const bad = path.join(dir, "bad.jsonl");
  fs.writeFileSync(bad, `{"goal": "ok"}\n{"goal": "", "game_config": {}}\n`);
  const before = (await farm.scheduler.list()).length;
  const r = await farmCli(["submit", TODO, "--api", farm.schedulerService!.http.url, "--episodes", "2", "--goals", bad]);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /bad\.jsonl:2: field goal: must not be empty/);
  assert.equal((await farm.scheduler.list()).length, before);
});

test("an llm campaign of the notes task observing pixels and a11y completes exactly once; its Parquet export has goal, elements, action JSON and screenshots on every step", async () => {
  const api = farm.schedulerService!.http.url;
  const submitted = await farmCli(["submit", TODO, "--api", api, "--episodes", "4", "--policy", "llm", "--llm-endpoint", llm.endpoint, "--llm-model", "stand-in", "--observe", "pixels,a11y", "--max-steps", "12", "--id", "llm-notes", "--json"]);
  assert.equal(submitted.code, 0, submitted.stderr);
  const st = await pollUntil(async () => {
    const s = await farm.scheduler.status("llm-notes");
    return s.state === "running" ? undefined : s;
  }, { timeoutMs: 180_000, intervalMs: 200 });
  assert.ok(st, "the campaign finished within 180 s");
  assert.equal(st.state, "completed", JSON.stringify(st.summary));
  assert.equal(st.completed, 4);

  // Exactly once: one record per episode index, each solved (the task's reward) by UI actions the model chose.
  const episodes: StoredEpisode[] = [];
  for await (const e of readTrajectories(out)) if (e.campaignId === "llm-notes") episodes.push(e);
  assert.deepEqual(episodes.map((e) => e.episodeIndex).sort(), [0, 1, 2, 3]);
  for (const e of episodes) {
    assert.equal(e.totalReward, 1, `episode ${e.episodeIndex}: ${e.cause} ${e.causeDetail}`);
    assert.ok(e.steps.every((s) => s.ui && s.ui.resolved && !s.ui.invalid), `episode ${e.episodeIndex}: every step a carried-out UI action`);
  }

  const dataset = path.join(dir, "llm-dataset");
  const exported = await farmCli(["trajectories", "export", "--format", "parquet", out, "--out", dataset]);
  assert.equal(exported.code, 0, exported.stderr);
  const query = async (sql: string) => {
    const r = await farmCli(["trajectories", "query", sql, dataset, "--json"]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
  };
  const [c] = await query(
    "SELECT count(*)::INTEGER AS steps, count(DISTINCT episode_id)::INTEGER AS episodes, " +
      "count(*) FILTER (WHERE goal = 'Create a note titled milk containing 2 litres')::INTEGER AS with_goal, " +
      "count(*) FILTER (WHERE elements LIKE '[{\"index\":0,%')::INTEGER AS with_elements, " +
      "count(*) FILTER (WHERE action_json LIKE '{\"action_type\":%')::INTEGER AS with_action, " +
      "count(*) FILTER (WHERE screenshot IS NOT NULL)::INTEGER AS with_screenshot " +
      "FROM steps WHERE episode_id LIKE 'llm-notes-%'",
  );
  const steps = episodes.reduce((n, e) => n + e.steps.length, 0);
  assert.deepEqual(c, { steps, episodes: 4, with_goal: steps, with_elements: steps, with_action: steps, with_screenshot: steps });
});
