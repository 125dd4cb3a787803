/**
 * The Python client (Debian's /usr/bin/python3 with python3-grpcio; the stubs clients/python ships, generated
 * from our .proto by its tools/generate_stubs.py) against a real worker: clients/python/examples/remote_env_random.py
 * runs two worlds at once; every episode it reports matches its committed trajectory, the last one of each
 * world matches the app's logged score, and the last line is `worlds=2 steps=… reward=…`; its `--ui` mode drives the
 * Todo app with UI actions chosen from the elements, and the invalid ones it saw are the ones the trajectories count.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, test } from "node:test";
import { resolveWorkerConfig, WorkerService } from "../src/index.ts";
import { FAST_EPISODE, readEpisodes, REPO, startHarness, TASK_FILE, until, type Harness } from "./harness.ts";
import { appLoggedScore } from "./remote-env-client.ts";

const run = promisify(execFile);
let h: Harness;
let worker: WorkerService;
let out: string;
const TODO_FILE = path.join(REPO, "tasks/todo_create_note.textproto");

before(async () => {
  h = await startHarness(2);
  out = path.join(h.tmp, "out");
  worker = await WorkerService.create(
    resolveWorkerConfig({ redisUrl: h.redis.url, queuePrefix: h.prefix, adbPort: h.adb.port, taskPaths: [TASK_FILE, TODO_FILE], outDir: out, metricsPort: 0, drainTimeoutMs: 5000, episode: { ...FAST_EPISODE, logSettleMs: 5 }, envPort: 0 }),
  );
  await worker.start();
  await until("2 devices ready", 60_000, () => Object.values(worker.deviceStates()).filter((s) => s === "ready").length === 2, { everyMs: 100 });
});

after(async () => {
  await worker?.close();
  await h?.close();
});

test("python3 remote_env_random.py: two worlds, rewards = committed trajectories = the app's logged score", async () => {
  const script = path.join(REPO, "clients/python/examples/remote_env_random.py");
  const args = [script, "--target", worker.envAddress!, "--task", h.task.task.id, "--steps", "40", "--worlds", "2", "--max-episode-steps", "15", "--seed", "5"];
  const r = await run("/usr/bin/python3", args, { env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" }, timeout: 180_000 });
  const lines = r.stdout.trim().split("\n");
  const last = /^worlds=2 steps=80 reward=(\S+)$/.exec(lines[lines.length - 1]!);
  assert.ok(last, `last line: ${lines[lines.length - 1]}\n${r.stderr}`);
  const episodes = lines.map((l) => /^episode world=(\S+) index=(\d+) reward=(\S+) end=(\S+)$/.exec(l)).filter((m) => m !== null);
  const worlds = [...new Set(episodes.map((m) => m[1]!))];
  assert.equal(worlds.length, 2);
  let total = 0;
  let steps = 0;
  for (const w of worlds) {
    const committed = await readEpisodes(out, w);
    const reported = episodes.filter((m) => m[1] === w);
    assert.equal(committed.length, reported.length, `world ${w}: every episode committed once`);
    for (const m of reported) {
      const e = committed.find((c) => c.episodeIndex === Number(m[2]));
      assert.ok(e, `world ${w} episode ${m[2]} committed`);
      assert.equal(e.totalReward, Number(m[3]), `world ${w} episode ${m[2]}: reward seen in Python = trajectory`);
      total += e.totalReward;
      steps += e.steps.length;
    }
    // The app logs its score when it changes (a new game that never scores logs nothing): its last logged
    // score is the final score of the latest game that scored.
    const scored = committed.filter((e) => e.totalReward > 0).sort((a, b) => b.episodeIndex - a.episodeIndex)[0];
    assert.equal(await appLoggedScore(h.adb.port, committed[0]!.deviceSerial), scored?.totalReward ?? 0, `world ${w}: the app's logged score = the last scoring episode's rewards`);
  }
  assert.equal(steps, 80, "every Python step is in a trajectory");
  assert.equal(Number(last[1]), total);
  assert.deepEqual(worker.remoteWorlds(), {}, "the script destroyed its worlds");
});

test("python3 remote_compliance_checks.py: the Step compliance checks a Python client meets (exact observations, refused uids, dtypes and shapes, broadcast, the string ui_action)", async () => {
  const script = path.join(REPO, "clients/python/tests/remote_compliance_checks.py");
  const r = await run("/usr/bin/python3", [script, "--target", worker.envAddress!, "--task", h.task.task.id], { env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" }, timeout: 120_000 }).catch((e: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`);
  });
  const lines = r.stdout.trim().split("\n");
  assert.equal(lines[lines.length - 1], "checks=12 failed=0", r.stdout + r.stderr);
  assert.equal(lines.filter((l) => l.startsWith("ok test_")).length, 10);
  assert.equal(lines.filter((l) => l.startsWith("ok farm_")).length, 2);
  assert.deepEqual(worker.remoteWorlds(), {}, "the script destroyed its world");
});

test("python3 remote_env_random.py --ui: UI actions from the elements; the invalid ones it saw = the committed count; last line as before", async () => {
  const script = path.join(REPO, "clients/python/examples/remote_env_random.py");
  const args = [script, "--ui", "--target", worker.envAddress!, "--task", "todo_create_note", "--steps", "12", "--worlds", "1", "--max-episode-steps", "8", "--seed", "3"];
  const r = await run("/usr/bin/python3", args, { env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" }, timeout: 180_000 }).catch((e: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`);
  });
  const lines = r.stdout.trim().split("\n");
  const last = /^worlds=1 steps=12 reward=(\S+)$/.exec(lines[lines.length - 1]!);
  assert.ok(last, `last line: ${lines[lines.length - 1]}\n${r.stderr}`);
  const worldLine = lines.map((l) => /^world=(\S+) episodes=(\d+) steps=12 reward=\S+ ui_invalid=(\d+)$/.exec(l)).find((m) => m !== null);
  assert.ok(worldLine, r.stdout);
  const committed = await readEpisodes(out, worldLine[1]!);
  assert.equal(committed.length, Number(worldLine[2]), "every episode committed once");
  assert.equal(committed.reduce((a, e) => a + e.steps.length, 0), 12, "every UI step is in a trajectory");
  assert.ok(committed.every((e) => e.policyName === "remote:dm_env_rpc" && e.taskId === "todo_create_note"));
  const counted = committed.reduce((a, e) => a + (e.counters.invalid_actions ?? 0), 0);
  assert.equal(counted, Number(worldLine[3]), "the invalid actions Python saw are the ones the trajectories count");
  assert.equal(committed.reduce((a, e) => a + e.totalReward, 0), Number(last[1]));
  assert.deepEqual(worker.remoteWorlds(), {}, "the script destroyed its world");
});
