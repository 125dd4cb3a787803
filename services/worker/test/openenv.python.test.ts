/**
 * Farm devices as OpenEnv environments, driven from Python: Debian's /usr/bin/python3 runs
 * clients/python/tests/device_openenv.py (farm_client.openenv_client, a standard-library client written from
 * OpenEnv's protocol) against a worker with `--openenv-port`. A whole episode of the todo_note_create family is
 * solved from the goal and the elements with reward 1 and success 1 at the end; that episode is committed with the
 * same reward and success; after the client closes, both devices are back in the campaign pool.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, test } from "node:test";
import { resolveWorkerConfig, WorkerService } from "../src/index.ts";
import { FAST_EPISODE, readEpisodes, REPO, startHarness, until, type Harness } from "./harness.ts";

const run = promisify(execFile);
let h: Harness;
let worker: WorkerService;
let out: string;
const FAMILY = path.join(REPO, "tasks/families/todo_note_create.family.yaml");

before(async () => {
  h = await startHarness(2);
  out = path.join(h.tmp, "out");
  worker = await WorkerService.create(
    resolveWorkerConfig({ redisUrl: h.redis.url, queuePrefix: h.prefix, adbPort: h.adb.port, taskPaths: [FAMILY], outDir: out, metricsPort: 0, drainTimeoutMs: 5000, episode: { ...FAST_EPISODE, logSettleMs: 5 }, openenvPort: 0 }),
  );
  await worker.start();
  await until("2 devices ready", 30_000, () => Object.values(worker.deviceStates()).filter((s) => s === "ready").length === 2, { everyMs: 100 });
});

after(async () => {
  await worker?.close();
  await h?.close();
});

test("python3 tests/device_openenv.py: a family episode over OpenEnv's WebSocket, reward and success 1, committed, devices back", async () => {
  const r = await run("/usr/bin/python3", ["-m", "unittest", "-v", "tests.device_openenv"], {
    cwd: path.join(REPO, "clients/python"),
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", FARM_OPENENV_URL: worker.openEnvUrl! },
    timeout: 150_000, // three Python tests; generous for a busy machine
  }).catch((e: { stdout?: string; stderr?: string; message: string }) => assert.fail(`python failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`));
  assert.match(r.stderr, /Ran 3 tests/, r.stderr);
  assert.match(r.stderr, /\nOK\s*$/, r.stderr);
  assert.doesNotMatch(r.stderr, /skipped/, r.stderr);
  const line = r.stdout.split("\n").find((l) => l.startsWith("OPENENV_RESULT "));
  assert.ok(line, r.stdout);
  const res = JSON.parse(line.slice("OPENENV_RESULT ".length)) as { session: string; steps: number; reward: number; success: number; goal: string };
  assert.deepEqual([res.reward, res.success], [1, 1]);

  // The solved episode, as committed on this host: the session is its campaign.
  const committed = await readEpisodes(out, `openenv-${res.session}`);
  assert.equal(committed.length, 1, "one episode in that session, committed once");
  const e = committed[0]!;
  assert.equal(e.policyName, "remote:openenv");
  assert.equal(e.totalReward, res.reward);
  assert.equal(e.success, 1);
  assert.equal(e.steps.length, res.steps);
  assert.equal(e.goal, res.goal);

  // Every session ended with its client: no device leased any more, both back in the campaign pool.
  await until("sessions ended", 5000, () => Object.keys(worker.openEnvSessions()).length === 0);
  assert.deepEqual(Object.values(worker.pump.pool.states()).sort(), ["idle", "idle"]);
  const metrics = await (await fetch(`${worker.metricsUrl}/metrics`)).text();
  assert.match(metrics, /farm_openenv_session_ends_total\{reason="close"[^}]*\} 2\b/);
  assert.match(metrics, /farm_openenv_steps_total\{[^}]*\} (\d+)/);
  assert.match(metrics, /farm_openenv_sessions\{[^}]*\} 0\b/);
});
