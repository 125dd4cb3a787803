import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { formatSummary, inspectTrajectories, listTrajectoryFiles, syntheticEpisode } from "@farm/trajectory";
import { findDuplicates, SCHEMA_VERSION } from "@farm/trajectory/testing";
import { tempDir, writeEpisodes } from "./helpers.ts";


/** Two writers; episode 1 retried (attempt 2) and written again by the second writer. */
async function dataset(): Promise<string> {
  const dir = await tempDir();
  await writeEpisodes(dir, [0, 1, 2].map((i) => syntheticEpisode(i, { steps: 4, frames: true })), { writerId: "a", frameEvery: 2 });
  await writeEpisodes(dir, [syntheticEpisode(1, { steps: 4, attempt: 2 }), syntheticEpisode(3, { steps: 4 })], { writerId: "b", codec: "snappy" });
  return dir;
}

describe("inspect and duplicates", () => {
  it("summarises counts, outcomes, rewards, schema versions and duplicates", async () => {
    const dir = await dataset();
    const s = await inspectTrajectories([dir]);
    const recs = [0, 1, 2, 1, 3].map((i) => syntheticEpisode(i, { steps: 4 }));
    assert.equal(s.files, 2);
    assert.equal(s.episodes, 5);
    assert.equal(s.uniqueEpisodes, 4);
    assert.equal(s.steps, 20);
    assert.equal(s.frames, 6);
    assert.deepEqual(s.schemaVersions, { [String(SCHEMA_VERSION)]: 2 });
    assert.deepEqual(s.codecs, { deflate: 1, snappy: 1 });
    const rewards = recs.map((r) => r.totalReward);
    assert.deepEqual(s.reward, { mean: rewards.reduce((a, b) => a + b) / 5, min: Math.min(...rewards), max: Math.max(...rewards) });
    const byOutcome: Record<string, Record<string, number>> = {};
    for (const r of recs) (byOutcome[r.outcome] ??= {})[r.cause] = (byOutcome[r.outcome]?.[r.cause] ?? 0) + 1;
    assert.deepEqual(s.outcomes, byOutcome);
    assert.equal(s.duplicates.length, 1);
    assert.equal(s.duplicates[0]!.episodeId, "campaign-synthetic-1");
    assert.deepEqual(s.duplicates[0]!.occurrences.map((o) => o.attempt).sort(), [1, 2]);
  });

  it("v3: shows the goals, agent statuses, answers and invalid actions of agent episodes", async () => {
    const dir = await tempDir();
    const recs = [0, 1, 2, 3, 4, 5].map((i) => syntheticEpisode(i, { steps: 8, agent: true }));
    recs[5]!.goal = `Type "${"x".repeat(300)}"\u001b[31m`;
    await writeEpisodes(dir, [...recs, syntheticEpisode(9, { steps: 2 })]);
    const s = await inspectTrajectories([dir]);
    const goals = new Map<string, number>();
    for (const r of recs.slice(0, 5)) goals.set(r.goal!, (goals.get(r.goal!) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(Object.entries(s.goals).filter(([g]) => !g.startsWith("Type"))), Object.fromEntries(goals));
    const long = Object.keys(s.goals).find((g) => g.startsWith("Type"))!;
    assert.ok(long.length <= 201 && long.endsWith("…"), "a long goal is cut");
    const statuses = new Map<string, number>();
    for (const r of recs) if (r.agentStatus) statuses.set(r.agentStatus, (statuses.get(r.agentStatus) ?? 0) + 1);
    assert.deepEqual(s.agentStatuses, Object.fromEntries(statuses));
    assert.equal(s.invalidActions, recs.reduce((n, r) => n + r.invalidActions!, 0));
    assert.ok(s.invalidActions > 0);
    assert.deepEqual(s.answers, recs.filter((r) => r.answer).map((r) => ({ episodeId: r.episodeId, answer: r.answer! })));
    const text = formatSummary(s);
    assert.match(text, new RegExp(`goals: ${goals.size + 1}`));
    assert.ok(text.includes(`"${recs[0]!.goal}": ${goals.get(recs[0]!.goal!)}`), text);
    assert.match(text, new RegExp(`agent status: .*complete=${statuses.get("complete")}.*; invalid actions: ${s.invalidActions}; answers: ${s.answers.length}`));
    assert.ok(text.includes(`${recs[0]!.episodeId}: answer "There are 2 notes"`));
    assert.ok(!text.includes("\u001b"), "control bytes from a goal are escaped");
  });

  it("v4: success rates and score errors of scored episodes, by task", async () => {
    const dir = await tempDir();
    // Seeds 0..9: seed % 5 == 4 is a score error (4, 9); seed % 4 == 1 fails (1, 5); the rest succeed.
    const recs = Array.from({ length: 10 }, (_, i) => syntheticEpisode(i, { steps: 2, scored: true, taskId: i < 5 ? "wifi_set" : "notes_add" }));
    await writeEpisodes(dir, [...recs, syntheticEpisode(20, { steps: 2 })]);
    const s = await inspectTrajectories([dir]);
    assert.deepEqual(s.scores, {
      wifi_set: { scored: 5, successes: 3, meanSuccess: 0.75, errors: 1 },
      notes_add: { scored: 5, successes: 3, meanSuccess: 0.75, errors: 1 },
    });
    assert.deepEqual(s.scoreErrors.map((e) => e.episodeId).sort(), [recs[4]!.episodeId, recs[9]!.episodeId]);
    const text = formatSummary(s);
    assert.match(text, /scores: 10 scored episodes; success rate 0\.7500 .*; score errors: 2/);
    assert.match(text, /  wifi_set: scored=5 success_rate=0\.7500 mean_success=0\.7500 errors=1/);
    assert.ok(text.includes(`${recs[4]!.episodeId}: score error "notes: no database at`), text);
  });

  it("a campaign without agent episodes prints no goal or agent lines", async () => {
    const s = await inspectTrajectories([await dataset()]);
    assert.deepEqual([s.goals, s.agentStatuses, s.invalidActions, s.answers], [{}, {}, 0, []]);
    assert.doesNotMatch(formatSummary(s), /goals:|agent status:|scores:/);
    assert.deepEqual([s.scores, s.scoreErrors], [{}, []]);
  });

  it("findDuplicates groups by episode id", () => {
    const d = findDuplicates([
      { episodeId: "c-1", attempt: 1, file: "x", outcome: "truncated", cause: "device_lost" },
      { episodeId: "c-2", attempt: 1, file: "x", outcome: "terminated", cause: "episode_end" },
      { episodeId: "c-1", attempt: 2, file: "y", outcome: "terminated", cause: "episode_end" },
    ]);
    assert.deepEqual(d, [{ episodeId: "c-1", occurrences: [
      { attempt: 1, file: "x", outcome: "truncated", cause: "device_lost" },
      { attempt: 2, file: "y", outcome: "terminated", cause: "episode_end" },
    ] }]);
  });

  it("lists a truncated file as unreadable instead of counting half of it", async () => {
    const dir = await dataset();
    const { files } = await listTrajectoryFiles([dir]);
    const whole = await readFile(files[0]!);
    await writeFile(path.join(path.dirname(files[0]!), "cut.avro"), whole.subarray(0, whole.length - 40));
    const s = await inspectTrajectories([dir]);
    assert.equal(s.unreadable.length, 1);
    assert.match(s.unreadable[0]!.error, /truncated|ends inside/);
    assert.equal(s.episodes, 5);
  });
});
