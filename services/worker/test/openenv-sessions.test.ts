/**
 * OpenEnv sessions on a worker (`--openenv-port`): each holds one device of the campaign pool while it lives and gives
 * it back when it ends — on client loss (the socket dropped without a close message), on the idle timeout (an error
 * message, then close 1001), on a close message; a session beyond the devices gets CAPACITY_REACHED; the HTTP
 * endpoints answer as OpenEnv's server does, and the stateless /reset is refused pointing at /ws.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import WebSocket from "ws";
import { resolveWorkerConfig, WorkerService } from "../src/index.ts";
import { FAST_EPISODE, readEpisodes, startHarness, until, type Harness } from "./harness.ts";

let h: Harness;
let worker: WorkerService;
let out: string;
const IDLE_MS = 1500;

interface Client {
  ws: WebSocket;
  next(): Promise<{ type: string; data: Record<string, unknown> }>;
  call(msg: unknown): Promise<{ type: string; data: Record<string, unknown> }>;
  closed: Promise<{ code: number; reason: string }>;
}

async function open(): Promise<Client> {
  const ws = new WebSocket(`${worker.openEnvUrl!.replace(/^http/, "ws")}/ws`);
  const inbox: string[] = [];
  const waiting: ((s: string) => void)[] = [];
  ws.on("message", (d) => {
    const s = String(d);
    const w = waiting.shift();
    if (w) w(s);
    else inbox.push(s);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: String(reason) })));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const next = () => new Promise<string>((resolve) => (inbox.length ? resolve(inbox.shift()!) : waiting.push(resolve))).then((s) => JSON.parse(s) as { type: string; data: Record<string, unknown> });
  return {
    ws,
    next,
    closed,
    call(msg) {
      ws.send(JSON.stringify(msg));
      return next();
    },
  };
}

const metrics = async () => (await fetch(`${worker.metricsUrl}/metrics`)).text();
const ends = async (reason: string) => Number(new RegExp(`farm_openenv_session_ends_total\\{reason="${reason}"[^}]*\\} (\\d+)`).exec(await metrics())?.[1]);
const poolIdle = () => Object.values(worker.pump.pool.states()).every((s) => s === "idle");

before(async () => {
  h = await startHarness(2);
  out = `${h.tmp}/out`;
  worker = await WorkerService.create(
    resolveWorkerConfig({ redisUrl: h.redis.url, queuePrefix: h.prefix, adbPort: h.adb.port, taskPaths: [h.task.sourcePath!], outDir: out, metricsPort: 0, drainTimeoutMs: 5000, episode: { ...FAST_EPISODE, logSettleMs: 5 }, openenvPort: 0, openenvIdleTimeoutMs: IDLE_MS, openenvMaxSessions: 3, openenvTask: h.task.task.id }),
  );
  await worker.start();
  await until("2 devices ready", 30_000, () => Object.values(worker.deviceStates()).filter((s) => s === "ready").length === 2, { everyMs: 100 });
});

after(async () => {
  await worker?.close();
  await h?.close();
});

test("HTTP: /health, /metadata, /schema as OpenEnv serves them; stateless /reset refused pointing at /ws", async () => {
  const base = worker.openEnvUrl!;
  assert.deepEqual(await (await fetch(`${base}/health`)).json(), { status: "healthy" });
  const meta = (await (await fetch(`${base}/metadata`)).json()) as Record<string, unknown>;
  assert.deepEqual(Object.keys(meta).sort(), ["author", "description", "documentation_url", "name", "readme_content", "version"]);
  const schema = (await (await fetch(`${base}/schema`)).json()) as Record<string, unknown>;
  assert.deepEqual(Object.keys(schema).sort(), ["action", "observation", "state"]);
  const r = await fetch(`${base}/reset`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
  assert.equal(r.status, 404);
  assert.match(((await r.json()) as { detail: string }).detail, /WebSocket at \/ws/);
});

test("client loss: the socket drops mid-episode; the episode is committed cancelled and the device goes back", async () => {
  const before = await ends("client_lost");
  const c = await open();
  const r = await c.call({ type: "reset", data: { task: h.task.task.id, seed: 4, screenshot: "none" } });
  assert.equal(r.type, "observation", JSON.stringify(r));
  assert.equal(r.data.done, false);
  const s = await c.call({ type: "step", data: { action_type: "TOUCH", touch_position: [0.5, 0.5] } });
  assert.equal(s.type, "observation");
  const st = await c.call({ type: "state" });
  assert.equal(st.data.step_count, 1);
  assert.equal(Object.keys(worker.openEnvSessions()).length, 1);
  assert.ok(Object.values(worker.pump.pool.states()).includes("leased"), "the session's device is out of the campaign pool");
  c.ws.terminate();
  await until("session ended on client loss", 10_000, () => Object.keys(worker.openEnvSessions()).length === 0 && poolIdle());
  assert.equal(await ends("client_lost"), before + 1);
  const committed = await readEpisodes(out, `openenv-${String(st.data.session_id)}`);
  assert.equal(committed.length, 1);
  assert.equal(committed[0]!.cause, "cancelled");
});

test("idle timeout: a silent session gets SESSION_ERROR, close 1001, and its device goes back", async () => {
  const c = await open();
  // No task given: the worker's --openenv-task.
  const r = await c.call({ type: "reset", data: { screenshot: "none", elements: false } });
  assert.equal(r.type, "observation", JSON.stringify(r));
  assert.equal((r.data.observation as { task_id: string }).task_id, h.task.task.id);
  const t0 = Date.now();
  const msg = await c.next();
  assert.equal(msg.type, "error");
  assert.equal(msg.data.code, "SESSION_ERROR");
  assert.match(String(msg.data.message), /idle timeout/);
  const closed = await c.closed;
  assert.equal(closed.code, 1001);
  assert.ok(Date.now() - t0 >= IDLE_MS - 600, `closed after ${Date.now() - t0} ms, the idle timeout is ${IDLE_MS}`);
  await until("device back", 5000, () => Object.keys(worker.openEnvSessions()).length === 0 && poolIdle());
  assert.equal(await ends("idle_timeout"), 1);
});

test("capacity: a session beyond the idle devices gets CAPACITY_REACHED; a close message or an oversized message ends a session and frees its device", async () => {
  const a = await open();
  const b = await open();
  assert.equal(Object.keys(worker.openEnvSessions()).length, 2);
  const c = await open();
  const refused = await c.next();
  assert.equal(refused.type, "error");
  assert.equal(refused.data.code, "CAPACITY_REACHED");
  assert.match(String(refused.data.message), /no idle device/);
  assert.equal((await c.closed).code, 1013);
  const bad = await a.call({ type: "step", data: { action_type: "wait" } });
  assert.equal(bad.data.code, "EXECUTION_ERROR", "a step before any reset");
  const unknown = await a.call({ type: "reset", data: { task: h.task.task.id, colour: "red" } });
  assert.equal(unknown.data.code, "VALIDATION_ERROR");
  a.ws.send("{not json");
  assert.equal((await a.next()).data.code, "INVALID_JSON");
  const closesBefore = await ends("close");
  const lostBefore = await ends("client_lost");
  a.ws.send(JSON.stringify({ type: "close" }));
  assert.equal((await a.closed).code, 1000);
  // A message over the 1 MiB bound: the server closes the socket (1009, message too big) and ends the session.
  b.ws.send(JSON.stringify({ type: "step", data: { action_type: "answer", text: "x".repeat(1024 * 1024) } }));
  assert.equal((await b.closed).code, 1009);
  await until("both devices back", 5000, () => Object.keys(worker.openEnvSessions()).length === 0 && poolIdle());
  assert.equal(await ends("close"), closesBefore + 1);
  assert.equal(await ends("client_lost"), lostBefore + 1);
  assert.ok((await ends("error")) >= 1);
});
