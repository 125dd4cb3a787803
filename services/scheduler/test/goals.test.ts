/**
 * Campaign goals over the HTTP API (issue 28): episode i's job carries goals[i mod N] and its game config, the status
 * counts the goals instead of echoing them, and bad goals are refused (400) naming the field (goals.<i>.<field>) and
 * why, before anything is enqueued: bad text, oversized configs, too many goals, game configs with start-snapshot.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { episodeJobId } from "@farm/queue";
import { useSchedulerService } from "./helpers.ts";

const service = useSchedulerService();

const post = async (body: unknown): Promise<{ status: number; body: Record<string, any> }> => {
  const r = await fetch(`${service.running.http.url}/campaigns`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Record<string, any> };
};

const GOALS = [
  { goal: "Create a note titled milk containing 2 litres", gameConfig: { title: "milk", body: "2 litres" } },
  { goal: "Create a note titled eggs", gameConfig: { title: "eggs" } },
  { goal: "Look at the notes" },
];

test("every episode's job carries goals[i mod N] and its game config; the status counts the goals", async () => {
  const r = await post({ taskId: "todo_create_note", episodes: 5, goals: GOALS, options: { a11yEvery: 1, frameEvery: 2, maxInvalidActions: 3 } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const c = r.body.campaign;
  assert.equal(c.goals, 3);
  assert.equal(c.spec.goals, undefined, "the status does not echo the goals");
  for (let i = 0; i < 5; i++) {
    const job = await service.running.scheduler.queue.getJob(episodeJobId(c.id, i));
    assert.equal(job?.data.goal, GOALS[i % 3]!.goal);
    assert.deepEqual(job?.data.gameConfig, GOALS[i % 3]!.gameConfig);
    assert.deepEqual(job?.data.options, { a11yEvery: 1, frameEvery: 2, maxInvalidActions: 3 });
  }
  // Other goals are other work: another derived id. The same goals again add nothing.
  assert.equal((await post({ taskId: "todo_create_note", episodes: 5, goals: GOALS, options: { a11yEvery: 1, frameEvery: 2, maxInvalidActions: 3 } })).status, 200);
  const other = await post({ taskId: "todo_create_note", episodes: 5, goals: GOALS.slice(1), options: { a11yEvery: 1, frameEvery: 2, maxInvalidActions: 3 } });
  assert.equal(other.status, 201);
  assert.notEqual(other.body.campaign.id, c.id);
});

test("without goals the jobs carry none (the worker uses the task's description)", async () => {
  const r = await post({ taskId: "todo_create_note", episodes: 1 });
  assert.equal(r.status, 201);
  assert.equal(r.body.campaign.goals, undefined);
  const job = await service.running.scheduler.queue.getJob(episodeJobId(r.body.campaign.id, 0));
  assert.equal(job?.data.goal, undefined);
  assert.equal(job?.data.gameConfig, undefined);
});

const bad: [string, unknown, RegExp][] = [
  ["an empty goal", [{ goal: "ok" }, { goal: "" }], /goals\.1\.goal: must not be empty/],
  ["a goal with an escape sequence", [{ goal: "a\u001b[31m" }], /goals\.0\.goal: no control characters/],
  ["a goal too long", [{ goal: "x".repeat(2001) }], /goals\.0\.goal: at most 2000 characters/],
  ["a line without a goal", [{ gameConfig: { title: "x" } }], /goals\.0\.goal/],
  ["game_config spelled as in the file", [{ goal: "g", game_config: { title: "x" } }], /goals\.0: .*game_config/],
  ["a game config that is a list", [{ goal: "g", gameConfig: [1] }], /goals\.0\.gameConfig: must be a JSON object/],
  ["a game config too large", [{ goal: "g", gameConfig: { t: "x".repeat(5000) } }], /goals\.0\.gameConfig: at most 4096 characters/],
  ["no goals at all", [], /goals: /],
  ["too many goals", Array.from({ length: 10_001 }, () => ({ goal: "g" })), /goals: .*10000/],
];

for (const [what, goals, message] of bad) {
  test(`${what} is refused with 400 naming the field`, async () => {
    const r = await post({ taskId: "todo_create_note", episodes: 2, goals });
    assert.equal(r.status, 400, JSON.stringify(r.body).slice(0, 300));
    assert.equal(r.body.error.code, "SPEC_INVALID");
    assert.match(r.body.error.message, message);
  });
}

test("a game config with reset mode start-snapshot is refused naming the goal and the reason; goals alone are fine", async () => {
  const r = await post({ taskId: "todo_create_note", episodes: 2, goals: [{ goal: "a" }, { goal: "b", gameConfig: { title: "b" } }], options: { resetMode: "start-snapshot" } });
  assert.equal(r.status, 400);
  assert.match(r.body.error.message, /goals\.1\.gameConfig is refused: .*start-snapshot/);
  assert.equal((await post({ taskId: "todo_create_note", episodes: 2, goals: [{ goal: "a" }], options: { resetMode: "start-snapshot" } })).status, 201);
});

test("the OpenAPI document describes goals, their bounds and the observation options", async () => {
  const doc = (await (await fetch(`${service.running.http.url}/openapi.json`)).json()) as any;
  const input = doc.components.schemas.CampaignInput;
  assert.equal(input.properties.goals.maxItems, 10_000);
  assert.equal(input.properties.goals.items.properties.goal.maxLength, 2000);
  assert.equal(input.properties.goals.items.required, undefined, "goal is optional: a task family renders its own");
  assert.ok(input.properties.goals.items.properties.params);
  assert.match(input.description, /`params` \(task families only/);
  assert.ok(input.properties.options.properties.a11yEvery);
  assert.ok(input.properties.options.properties.maxInvalidActions);
  assert.match(input.description, /goals\[i mod N\]/);
});

// ---- task families (issue 41): goals lines with params; the goal is then optional ----

test("a family's goals fix params per episode: each job carries goals[i mod N]'s params (the goal only where given)", async () => {
  const goals = [{ params: { state: "off" } }, { goal: "Switch Wi-Fi on", params: { state: "on" } }, { goal: "Any state" }];
  const r = await post({ taskId: "example_wifi", episodes: 4, goals });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const id = r.body.campaign.id;
  const jobs = await Promise.all([0, 1, 2, 3].map((i) => service.running.scheduler.queue.getJob(episodeJobId(id, i))));
  assert.deepEqual(jobs.map((j) => [j?.data.goal, j?.data.params]), [[undefined, { state: "off" }], ["Switch Wi-Fi on", { state: "on" }], ["Any state", undefined], [undefined, { state: "off" }]]);
  // Params are part of the work: other params, another campaign.
  const other = await post({ taskId: "example_wifi", episodes: 4, goals: [{ params: { state: "on" } }] });
  assert.equal(other.status, 201);
  assert.notEqual(other.body.campaign.id, id);
});

const badParams: [string, string, unknown, RegExp][] = [
  ["params for a task that is not a family", "todo_create_note", [{ goal: "g", params: { state: "on" } }], /goals\.0\.params: task 'todo_create_note' is not a task family/],
  ["a parameter the family does not declare", "example_wifi", [{ params: { state: "on" } }, { params: { mode: "x" } }], /goals\.1\.params: "mode" is not a parameter of this family/],
  ["a value outside the choices", "example_wifi", [{ params: { state: "maybe" } }], /goals\.0\.params: state: must be one of "on", "off"/],
  ["a nested value", "example_wifi", [{ params: { state: ["on"] } }], /goals\.0\.params: state: must be a string, a finite number or a boolean/],
  ["too many params", "example_wifi", [{ params: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`p${i}`, i])) }], /goals\.0\.params: 65 parameters; at most 64/],
  ["an empty goals line", "example_wifi", [{}], /goals\.0: give goal, gameConfig or params/],
];

for (const [what, taskId, goals, message] of badParams) {
  test(`${what} is refused with 400 naming goals.<i>.params, before anything is enqueued`, async () => {
    const r = await post({ taskId, episodes: 2, goals });
    assert.equal(r.status, 400, JSON.stringify(r.body).slice(0, 300));
    assert.equal(r.body.error.code, "SPEC_INVALID");
    assert.match(r.body.error.message, message);
  });
}
