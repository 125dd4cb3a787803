/**
 * `farm run` with the agent flags (issue 28): `--goal` reaches the policy's context and every observation, `--goals`
 * cycles its lines over the episodes and applies their game configs (the Todo app rewards the configured note),
 * `--observe a11y` hands element lists to a policy that did not ask for them, `--max-invalid-actions` ends an
 * episode; bad flags fail before anything starts, naming the flag or file:line.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO, runFarm } from "./fixtures.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-run-goals-"));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const TODO = path.join(REPO, "tasks/todo_create_note.textproto");

const farm = (args: string[], timeoutMs = 120_000) => runFarm(args, { timeoutMs });

/**
 * A module policy that writes what it was given (context goal, observation goal, element count or -1) to `seen`
 * and answers nothing valid, so `--max-invalid-actions 2` ends each episode after two steps.
 */
function observerPolicy(seen: string): string {
  const file = path.join(dir, `observer-${path.basename(seen, ".jsonl")}.mjs`);
  fs.writeFileSync(
    file,
    `import { appendFileSync } from "node:fs";
export function createPolicy() {
  let ctx;
  return {
    name: "observer",
    needsPixels: false,
    reset(c) { ctx = c; },
    act(obs) {
      appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ episode: ctx.episodeIndex, ctxGoal: ctx.goal, goal: obs.goal, elements: Array.isArray(obs.elements) ? obs.elements.length : -1 }) + "\\n");
      return { invalid: "the observer never acts" };
    },
  };
}
`,
  );
  return file;
}

const seenOf = (f: string): { episode: number; ctxGoal: string; goal: string; elements: number }[] => fs.readFileSync(f, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const summaryOf = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!);

test("farm run --goal: the policy sees the goal; --observe a11y gives it elements; --max-invalid-actions ends the episodes", async () => {
  const seen = path.join(dir, "goal.jsonl");
  const r = await farm(["run", TODO, "--sim", "--episodes", "2", "--settle-ms", "20", "--policy", `module:${observerPolicy(seen)}`, "--goal", "Create a note titled eggs", "--observe", "a11y", "--max-invalid-actions", "2"]);
  assert.equal(r.code, 0, r.stderr);
  const s = summaryOf(r.stdout);
  assert.equal(s.episodes, 2);
  assert.deepEqual(s.causes, { invalid_actions: 2 });
  const obs = seenOf(seen);
  assert.equal(obs.length, 4, "two steps in each of two episodes");
  for (const o of obs) {
    assert.equal(o.ctxGoal, "Create a note titled eggs");
    assert.equal(o.goal, "Create a note titled eggs");
    assert.ok(o.elements > 0, `elements observed: ${JSON.stringify(o)}`);
  }
});

test("farm run without --goal: the goal is the task's description and no elements unless observed", async () => {
  const seen = path.join(dir, "plain.jsonl");
  const r = await farm(["run", TODO, "--sim", "--episodes", "1", "--settle-ms", "20", "--policy", `module:${observerPolicy(seen)}`, "--max-invalid-actions", "1"]);
  assert.equal(r.code, 0, r.stderr);
  const [o] = seenOf(seen);
  assert.equal(o!.goal, "Create a note titled milk containing 2 litres");
  assert.equal(o!.elements, -1);
});

test("farm run --goals: episode i gets line i mod N, and each game config decides which note is rewarded", async () => {
  const goals = path.join(dir, "goals.jsonl");
  fs.writeFileSync(
    goals,
    [
      { goal: "Create a note titled milk containing 2 litres", game_config: { title: "milk", body: "2 litres" } },
      { goal: "Create a note titled bread", game_config: { title: "bread" } },
    ]
      .map((g) => JSON.stringify(g))
      .join("\n") + "\n",
  );
  // The task's scripted solution saves "milk" / "2 litres": it solves the milk episodes only.
  const r = await farm(["run", TODO, "--sim", "--episodes", "3", "--settle-ms", "20", "--policy", `scripted:${path.join(REPO, "tasks/solutions/todo_create_note.jsonl")}`, "--goals", goals]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  assert.match(lines[0]!, /^episode=0 steps=\d+ reward=1 outcome=terminated cause=episode_end/);
  assert.match(lines[1]!, /^episode=1 steps=\d+ reward=0 /);
  assert.match(lines[2]!, /^episode=2 steps=\d+ reward=1 outcome=terminated cause=episode_end/);
});

test("bad agent flags fail before anything starts, naming the flag, the file:line and the field", async () => {
  const bad = path.join(dir, "bad.jsonl");
  fs.writeFileSync(bad, `{"goal": "fine"}\n{"goal": "x", "game_config": [1]}\n`);
  const withConfig = path.join(dir, "config.jsonl");
  fs.writeFileSync(withConfig, `{"goal": "x", "game_config": {"title": "x"}}\n`);
  // Each is refused before anything starts: side by side.
  const [badGoals, badObserve, refused] = await Promise.all([
    farm(["run", TODO, "--sim", "--goals", bad]),
    farm(["run", TODO, "--sim", "--observe", "pixels,sound"]),
    farm(["run", TODO, "--sim", "--goals", withConfig, "--reset", "start-snapshot"]),
  ]);
  assert.notEqual(badGoals.code, 0);
  assert.match(badGoals.stderr, /bad\.jsonl:2: field game_config: must be a JSON object/);
  assert.notEqual(badObserve.code, 0);
  assert.match(badObserve.stderr, /--observe takes a comma-separated list of pixels, a11y \(each optional\), got 'sound'/);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /--goals with game_config is refused: .*start-snapshot/);
});
