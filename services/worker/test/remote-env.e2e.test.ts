/**
 * Remote environments over dm_env_rpc on a real worker (Redis, adb server, simulated emulators): two worlds
 * at once stepped by the random policy from a Node client, rewards checked against the app's logged score
 * and the committed trajectories; RESOURCE_EXHAUSTED when no device is idle; a vanished client's device
 * comes back to the pool; a campaign and a remote world share the host.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, test } from "node:test";
import { connectEnvironment, DmEnvRpcError, grpc, tensor, DataType } from "@farm/dm-env-rpc";
import { resolveWorkerConfig, WorkerService } from "../src/index.ts";
import { addCampaign, FAST_EPISODE, readEpisodes, startHarness, TASK_FILE, until, waitForCampaign, type Harness } from "./harness.ts";
import { appLoggedScore, i32, runRandomWorld, s } from "./remote-env-client.ts";

let h: Harness;
let worker: WorkerService;
let out: string;
let target: string;
/** The worker asks for a token (here on loopback too): every stream below sends it. */
const TOKEN = "remote-env-test-token-0123456789";
const connect = () => connectEnvironment(target, { token: TOKEN });

before(async () => {
  h = await startHarness(3);
  out = path.join(h.tmp, "out");
  worker = await WorkerService.create(
    resolveWorkerConfig({
      redisUrl: h.redis.url,
      queuePrefix: h.prefix,
      adbPort: h.adb.port,
      taskPaths: [TASK_FILE],
      outDir: out,
      metricsPort: 0,
      lockDurationMs: 5000,
      stalledIntervalMs: 2000,
      drainTimeoutMs: 5000,
      episode: { ...FAST_EPISODE, logSettleMs: 5 },
      envPort: 0,
      envIdleTimeoutMs: 1500,
      envToken: TOKEN,
    }),
  );
  await worker.start();
  target = worker.envAddress!;
  await until("3 devices ready", 60_000, () => Object.values(worker.deviceStates()).filter((st) => st === "ready").length === 3, { everyMs: 100, detail: () => JSON.stringify(worker.deviceStates()) });
});

after(async () => {
  await worker?.close();
  await h?.close();
});

const allIdle = () => until("every device back in the pool", 30_000, () => Object.values(worker.deviceStates()).every((st) => st === "ready"), { everyMs: 50, detail: () => JSON.stringify(worker.deviceStates()) });

test("two remote worlds at once: random steps; rewards = the app's logged score = the committed trajectory", async () => {
  const settings = (seed: number) => ({ task: s(h.task.task.id), seed: i32(seed), max_episode_steps: i32(25) });
  const runs = await Promise.all([runRandomWorld(target, settings(1), 100, 7, { token: TOKEN }), runRandomWorld(target, settings(2), 100, 8, { token: TOKEN })]);
  for (const r of runs) {
    assert.equal(r.ends.length, 1, "the episode ended (step limit or game over)");
    const eps = await readEpisodes(out, r.world);
    assert.equal(eps.length, 1, `world ${r.world}: one committed episode`);
    const e = eps[0]!;
    assert.equal(e.steps.length, r.steps, "every remote step is in the trajectory");
    assert.equal(e.totalReward, r.reward, "rewards seen remotely = the trajectory's");
    assert.equal(e.policyName, "remote:dm_env_rpc");
    assert.equal(await appLoggedScore(h.adb.port, e.deviceSerial), r.reward, "rewards = the app's own logged score");
  }
  assert.ok(runs.some((r) => r.reward > 0), "random swipes score in 2048");
  assert.ok(runs.every((r) => r.grids > 0), "the grid extra arrives as an observation");
  assert.notEqual((await readEpisodes(out, runs[0]!.world))[0]!.deviceSerial, (await readEpisodes(out, runs[1]!.world))[0]!.deviceSerial, "each world had its own device");
  const metrics = await (await fetch(`${worker.metricsUrl}/metrics`)).text();
  const remote = metrics.split("\n").filter((l) => l.startsWith('farm_episode_origins_total{origin="remote"')).reduce((a, l) => a + Number(l.split(" ").pop()), 0);
  assert.ok(remote >= 2, `remote episodes counted apart: ${remote}`);
  await allIdle();
});

test("a stream without the token, or with another, is refused with UNAUTHENTICATED", async () => {
  for (const opts of [{}, { token: "not-the-token-of-this-worker" }]) {
    const c = connectEnvironment(target, opts);
    await assert.rejects(c.request({ create_world: { settings: { task: s(h.task.task.id) } } }), (e: { code?: number; message: string }) => e.code === grpc.status.UNAUTHENTICATED && /FARM_ENV_TOKEN/.test(e.message));
    c.close();
  }
  assert.deepEqual(worker.remoteWorlds(), {});
});

test("no idle device → RESOURCE_EXHAUSTED with a clear message; bad settings → INVALID_ARGUMENT naming the setting", async () => {
  const conns = [0, 1, 2].map(() => connect());
  try {
    for (const c of conns) await c.request({ create_world: { settings: { task: s(h.task.task.id) } } });
    const extra = connect();
    await assert.rejects(extra.request({ create_world: { settings: { task: s(h.task.task.id) } } }), (e: DmEnvRpcError) => e.code === grpc.status.RESOURCE_EXHAUSTED && /no idle device/.test(e.message));
    await assert.rejects(extra.request({ create_world: { settings: { task: s("nope") } } }), (e: DmEnvRpcError) => e.code === grpc.status.INVALID_ARGUMENT && /unknown task 'nope'/.test(e.message));
    await assert.rejects(extra.request({ create_world: { settings: { task: s(h.task.task.id), frame_size: i32(0, 5) } } }), (e: DmEnvRpcError) => e.code === grpc.status.INVALID_ARGUMENT && /frame_size/.test(e.message));
    await assert.rejects(extra.request({ step: {} }), (e: DmEnvRpcError) => e.code === grpc.status.FAILED_PRECONDITION);
    extra.close();
  } finally {
    for (const c of conns) c.cancel();
  }
  await allIdle(); // created, never joined, client gone: released after the idle timeout
  assert.deepEqual(worker.remoteWorlds(), {});
});

test("a vanished client's device comes back to the pool after the idle timeout; its episode is committed", async () => {
  const r = await runRandomWorld(target, { task: s(h.task.task.id), seed: i32(3) }, 5, 9, { keepOpen: true, token: TOKEN });
  assert.equal(Object.values(worker.deviceStates()).filter((st) => st === "leased").length, 1);
  r.conn.cancel(); // no LeaveWorld, no DestroyWorld
  await allIdle();
  assert.deepEqual(worker.remoteWorlds(), {});
  await until("the vanished world's episode committed", 10_000, async () => (await readEpisodes(out, r.world)).length === 1);
  const e = (await readEpisodes(out, r.world))[0]!;
  assert.equal(e.cause, "cancelled");
  assert.equal(e.steps.length, 5);
});

test("a campaign and a remote world share the host without conflict", async () => {
  const conn = connect();
  const world = (await conn.request({ create_world: { settings: { task: s(h.task.task.id), seed: i32(4) } } })).create_world!.world_name;
  await conn.request({ join_world: { world_name: world } });
  const leased = worker.remoteWorlds()[world]!;
  await addCampaign(h, { campaignId: "shared", episodes: 6, options: { maxEpisodeSteps: 10 } });
  await conn.request({ step: {} });
  let steps = 0;
  const stepping = (async () => {
    for (; steps < 40; steps++) await conn.request({ step: { actions: { 1: i32(steps % 2 === 0 ? 0 : 1), 2: tensor(DataType.FLOAT, [0.3, 0.6], [2]) } } });
  })();
  assert.deepEqual(await waitForCampaign(h, "shared", 6, 120_000), { completed: 6, failed: 0 });
  await stepping;
  const campaign = await readEpisodes(out, "shared");
  assert.equal(campaign.length, 6);
  assert.ok(campaign.every((e) => e.deviceSerial !== leased), "no campaign episode ran on the leased device");
  await conn.request({ destroy_world: { world_name: world } });
  conn.close();
  const remote = await readEpisodes(out, world);
  assert.equal(remote.length, 1);
  assert.equal(remote[0]!.deviceSerial, leased);
  await allIdle();
});
