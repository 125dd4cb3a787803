/**
 * A GUI agent's steps over dm_env_rpc on a real worker (Redis, adb server, simulated emulators) with the Todo app:
 * the goal and the screen as elements arrive, the tree when recorded; UI actions go to the episode run, invalid
 * and malformed ones are recorded and the world goes on; touch fields with a ui_action are refused; a click by index
 * and input_text act on the app (libs/episode/src/ui-actuator.ts).
 */
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, test } from "node:test";
import { connectEnvironment, DataType, DmEnvRpcError, EnvironmentState, grpc, tensor, type EnvironmentConnection, type Tensor } from "@farm/dm-env-rpc";
import type { StepOutcome, UiElement } from "@farm/policy";
import { loadTaskFile } from "@farm/task";
import { resolveWorkerConfig, WorkerService } from "../src/index.ts";
import { AGENT_OBS, UI_ACTION_ID } from "../src/remote-env/agent-specs.ts";
import { FAST_EPISODE, readEpisodes, REPO, startHarness, until, type Harness } from "./harness.ts";
import { i32, s } from "./remote-env-client.ts";

const TODO_FILE = path.join(REPO, "tasks/todo_create_note.textproto");
const todo = loadTaskFile(TODO_FILE).task;

let h: Harness;
let worker: WorkerService;
let out: string;

before(async () => {
  h = await startHarness(1);
  out = path.join(h.tmp, "out");
  worker = await WorkerService.create(
    resolveWorkerConfig({ redisUrl: h.redis.url, queuePrefix: h.prefix, adbPort: h.adb.port, taskPaths: [TODO_FILE], outDir: out, metricsPort: 0, drainTimeoutMs: 5000, episode: { ...FAST_EPISODE, logSettleMs: 5 }, envPort: 0 }),
  );
  await worker.start();
  await until("1 device ready", 60_000, () => Object.values(worker.deviceStates()).includes("ready"), { everyMs: 100, detail: () => JSON.stringify(worker.deviceStates()) });
});

after(async () => {
  await worker?.close();
  await h?.close();
});

const AGENT = [AGENT_OBS.goal, AGENT_OBS.elements, AGENT_OBS.a11y_tree, AGENT_OBS.last_action_outcome, 4];

interface View {
  state: number;
  goal: string;
  elements: UiElement[];
  tree: string;
  previous: StepOutcome | undefined;
}

function view(r: { state: number; observations: Record<string, Tensor> }): View {
  const o = r.observations;
  const prev = o[AGENT_OBS.last_action_outcome]!.strings!.array[0]!;
  return {
    state: r.state,
    goal: o[AGENT_OBS.goal]!.strings!.array[0]!,
    elements: (o[AGENT_OBS.elements]!.strings?.array ?? []).map((e) => JSON.parse(e) as UiElement),
    tree: Buffer.from(o[AGENT_OBS.a11y_tree]!.uint8s?.array ?? new Uint8Array()).toString("utf8"),
    previous: prev === "" ? undefined : (JSON.parse(prev) as StepOutcome),
  };
}

async function openWorld(settings: Record<string, Tensor> = {}): Promise<{ conn: EnvironmentConnection; world: string; first: View }> {
  const conn = connectEnvironment(worker.envAddress!);
  const world = (await conn.request({ create_world: { settings: { task: s(todo.id), seed: i32(1), ...settings } } })).create_world!.world_name;
  await conn.request({ join_world: { world_name: world } });
  await conn.request({ reset: {} });
  const first = view((await conn.request({ step: { requested_observations: AGENT } })).step!);
  return { conn, world, first };
}

const ui = (conn: EnvironmentConnection, action: unknown) =>
  conn.request({ step: { actions: { [UI_ACTION_ID]: tensor(DataType.STRING, [typeof action === "string" ? action : JSON.stringify(action)]) }, requested_observations: AGENT } }).then((r) => view(r.step!));

async function closeWorld(conn: EnvironmentConnection, world: string): Promise<void> {
  await conn.request({ destroy_world: { world_name: world } });
  conn.close();
}

test("the goal and the screen as elements arrive with FIRST; the tree arrives on recorded steps", async () => {
  const { conn, world, first } = await openWorld({ a11y_every: i32(1) });
  try {
    assert.equal(first.state, EnvironmentState.RUNNING);
    assert.equal(first.goal, todo.description);
    assert.equal(first.previous, undefined, "nothing happened before FIRST");
    assert.ok(first.elements.length > 3, `the list screen has elements: ${first.elements.length}`);
    assert.deepEqual(first.elements.map((e) => e.index), first.elements.map((_, i) => i), "indexed in order");
    assert.ok(first.elements.some((e) => /new note/i.test(e.text) && e.is_clickable), `a clickable NEW NOTE: ${JSON.stringify(first.elements.map((e) => e.text))}`);
    const next = await conn.request({ step: { actions: { 1: i32(2) }, requested_observations: AGENT } }).then((r) => view(r.step!));
    assert.equal(next.state, EnvironmentState.RUNNING);
    const tree = JSON.parse(next.tree) as { v: number; columns: string[]; windows: { nodes: unknown[][] }[] };
    assert.equal(tree.v, 1);
    assert.ok(tree.windows.some((w) => w.nodes.length > 0), "the compact tree holds the screen's nodes");
    assert.ok(next.elements.length > 3);
  } finally {
    await closeWorld(conn, world);
  }
});

test("an invalid ui_action and a malformed one are recorded as invalid steps; the world goes on; both kinds at once are refused", async () => {
  const { conn, world, first } = await openWorld();
  try {
    const outOfRange = await ui(conn, { action_type: "click", index: first.elements.length + 50 });
    assert.equal(outOfRange.state, EnvironmentState.RUNNING, "an invalid action does not end the episode");
    assert.ok(outOfRange.previous?.invalid, `recorded as invalid with its reason: ${JSON.stringify(outOfRange.previous)}`);
    const malformed = await ui(conn, "click the NEW NOTE button");
    assert.equal(malformed.state, EnvironmentState.RUNNING);
    assert.deepEqual({ given: malformed.previous?.given, invalid: /not JSON/.test(malformed.previous?.invalid ?? "") }, { given: "click the NEW NOTE button", invalid: true });
    const unknown = await ui(conn, { action_type: "teleport" });
    assert.match(unknown.previous?.invalid ?? "", /action_type must be one of/);
    const both = { 1: i32(0), 2: tensor(DataType.FLOAT, [0.5, 0.5], [2]), [UI_ACTION_ID]: tensor(DataType.STRING, ['{"action_type":"navigate_back"}']) };
    await assert.rejects(conn.request({ step: { actions: both, requested_observations: AGENT } }), (e: DmEnvRpcError) => e.code === grpc.status.INVALID_ARGUMENT && /goes alone/.test(e.message));
    const after = await conn.request({ step: { actions: { 1: i32(1) }, requested_observations: AGENT } }).then((r) => view(r.step!));
    assert.equal(after.state, EnvironmentState.RUNNING, "the stream and the episode go on after a refused step");
  } finally {
    await closeWorld(conn, world);
  }
  const eps = await readEpisodes(out, world);
  assert.equal(eps.length, 1);
  assert.equal(eps[0]!.steps.length, 4, "three invalid steps and a LIFT were taken; the refused one was not");
  assert.equal(eps[0]!.counters.invalid_actions, 3, "every invalid answer counted in the trajectory");
});

test("a valid UI action reaches the run as the step's answer: answer is recorded, status complete ends the episode TERMINATED", async () => {
  const { conn, world } = await openWorld();
  let ended: { state: number; observations: Record<string, Tensor> };
  try {
    const answered = await ui(conn, { action_type: "answer", text: "two notes" });
    assert.equal(answered.state, EnvironmentState.RUNNING);
    const given = '{"action_type":"answer","text":"two notes"}';
    assert.deepEqual(answered.previous, { given, action: given, resolved: { op: "answer", text: "two notes" } });
    const text = JSON.stringify({ action_type: "status", goal_status: "complete" });
    ended = (await conn.request({ step: { actions: { [UI_ACTION_ID]: tensor(DataType.STRING, [text]) }, requested_observations: [...AGENT, 5] } })).step!;
    assert.equal(ended.state, EnvironmentState.TERMINATED, "the agent's status ends the episode");
    assert.equal(ended.observations["5"]!.doubles!.array[0], 0, "discount 0 on TERMINATED");
    assert.deepEqual(view(ended).previous?.resolved, { op: "status", goalStatus: "complete" });
  } finally {
    await closeWorld(conn, world);
  }
  const e = (await readEpisodes(out, world))[0]!;
  assert.deepEqual({ outcome: e.outcome, cause: e.cause, steps: e.steps.length }, { outcome: "terminated", cause: "agent_status", steps: 2 });
});

test("click by index opens what the element says; input_text reaches the app", async () => {
  const { conn, world, first } = await openWorld();
  try {
    const newNote = first.elements.find((e) => /new note/i.test(e.text) && e.is_clickable);
    assert.ok(newNote, "a NEW NOTE element");
    const editor = await ui(conn, { action_type: "click", index: newNote.index });
    assert.equal(editor.previous?.invalid, undefined, JSON.stringify(editor.previous));
    assert.equal(editor.previous?.resolved?.element, newNote.index);
    const title = editor.elements.find((e) => e.is_editable);
    assert.ok(title, `the editor shows a text field: ${JSON.stringify(editor.elements.map((e) => [e.class_name, e.text, e.hint_text]))}`);
    assert.ok(editor.elements.some((e) => /save/i.test(e.text)), "the editor has SAVE");
    const typed = await ui(conn, { action_type: "input_text", text: "milk", index: title.index });
    assert.equal(typed.previous?.invalid, undefined, JSON.stringify(typed.previous));
    assert.ok(typed.elements.some((e) => e.is_editable && e.text === "milk"), `the title field holds the typed text: ${JSON.stringify(typed.elements.filter((e) => e.is_editable))}`);
  } finally {
    await closeWorld(conn, world);
  }
});
