/**
 * The worker as a separate process (`farm worker`), against the same Redis, adb server and simulated
 * emulators (those stay in this process): SIGKILL mid-episode and a new worker still yields exactly 40
 * episodes; SIGTERM drains (exit 0, no temporary files, running episodes finished or handed back).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { episodeJobId } from "@farm/queue";
import { addCampaign, campaignJobs, readEpisodes, REPO, startHarness, TASK_FILE, temporaryFiles, until, waitForCampaign, type Harness } from "./harness.ts";

let h: Harness;

before(async () => {
  h = await startHarness(4);
});

after(async () => {
  await h?.close();
});

interface WorkerProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  stderr: () => string;
}

/** Starts `farm worker` and resolves once it printed its ready line. */
async function startWorker(out: string, extra: string[] = []): Promise<WorkerProcess> {
  const args = [
    path.join(REPO, "services/cli/bin/farm.js"), "worker",
    "--redis", h.redis.url, "--prefix", h.prefix, "--adb-port", String(h.adb.port),
    "--tasks", TASK_FILE, "--out", out, "--metrics-port", "0",
    "--lock-ms", "2000", "--stalled-ms", "1000", "--settle-ms", "20", "--step-timeout-ms", "3000",
    ...extra,
  ];
  const child = spawn(process.execPath, args, { cwd: REPO, env: { ...process.env, FARM_LOG_LEVEL: "info" }, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-20_000)));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.includes('"worker:ready"')) resolve();
    });
    void exited.then((code) => reject(new Error(`worker exited (${code}) before it was ready:\n${err}`)));
  });
  await ready;
  return { child, exited, stderr: () => err };
}

async function states(campaignId: string, n: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const s = await h.queue.getJobState(episodeJobId(campaignId, i));
    counts[s] = (counts[s] ?? 0) + 1;
  }
  return counts;
}

test("SIGKILL mid-episode, then a new worker: exactly 40 episodes, none lost, none duplicated", async () => {
  const out = path.join(h.tmp, "kill");
  const first = await startWorker(out);
  await addCampaign(h, { campaignId: "k40", episodes: 40, options: { maxEpisodeSteps: 60 } });
  // Kill while episodes are running and some are already committed.
  await until(
    "10 completed and 4 active",
    60_000,
    async () => {
      const s = await states("k40", 40);
      return (s.completed ?? 0) >= 10 && (s.active ?? 0) >= 4;
    },
    { everyMs: 50 },
  );
  first.child.kill("SIGKILL");
  assert.equal(await first.exited, null);
  const atKill = await states("k40", 40);
  assert.ok((atKill.active ?? 0) >= 1, `jobs were running at the kill: ${JSON.stringify(atKill)}`);

  const second = await startWorker(out);
  try {
    const r = await waitForCampaign(h, "k40", 40, 120_000);
    assert.deepEqual(r, { completed: 40, failed: 0 }, second.stderr().slice(-3000));
  } finally {
    second.child.kill("SIGTERM");
    assert.equal(await second.exited, 0, second.stderr().slice(-3000));
  }
  const eps = await readEpisodes(out);
  const ids = eps.map((e) => e.episodeId);
  assert.equal(new Set(ids).size, 40, "40 distinct episode ids");
  assert.equal(ids.length, 40, "no duplicate records");
  const stalled = await campaignJobs(h, "k40", 40);
  assert.ok(stalled.some((j) => (j?.attemptsStarted ?? 0) > 1), "some job was started again after the kill");
});

test("SIGTERM drains: running episodes finish within the grace period, exit 0, no temporary files", async () => {
  const out = path.join(h.tmp, "term-finish");
  const w = await startWorker(out, ["--drain-ms", "30000"]);
  await addCampaign(h, { campaignId: "tf", episodes: 12, options: { maxEpisodeSteps: 60 } });
  await until("4 active", 30_000, async () => ((await states("tf", 12)).active ?? 0) >= 4, { everyMs: 50 });
  w.child.kill("SIGTERM");
  assert.equal(await w.exited, 0, w.stderr().slice(-3000));
  const s = await states("tf", 12);
  assert.equal(s.active ?? 0, 0, `nothing left active: ${JSON.stringify(s)}`);
  assert.equal(s.failed ?? 0, 0);
  assert.ok((s.completed ?? 0) >= 4, `the running episodes finished: ${JSON.stringify(s)}`);
  assert.deepEqual(temporaryFiles(out), []);
  assert.equal((await readEpisodes(out)).length, s.completed);
  assert.match(w.stderr(), /"event":"worker:closed"/);

  // A later worker runs the rest; every episode exactly once.
  const w2 = await startWorker(out);
  assert.deepEqual(await waitForCampaign(h, "tf", 12, 60_000), { completed: 12, failed: 0 });
  w2.child.kill("SIGTERM");
  assert.equal(await w2.exited, 0);
  assert.equal(new Set((await readEpisodes(out)).map((e) => e.episodeId)).size, 12);
  assert.equal((await readEpisodes(out)).length, 12);
});

test("SIGTERM with a short grace period hands running episodes back without using an attempt", async () => {
  const out = path.join(h.tmp, "term-handback");
  const w = await startWorker(out, ["--drain-ms", "300"]);
  await addCampaign(h, { campaignId: "th", episodes: 4, options: { maxEpisodeSteps: 100_000, maxEpisodeSec: 600 } });
  await until("4 active", 30_000, async () => ((await states("th", 4)).active ?? 0) >= 4, { everyMs: 50 });
  await new Promise((r) => setTimeout(r, 500));
  w.child.kill("SIGTERM");
  assert.equal(await w.exited, 0, w.stderr().slice(-3000));
  const jobs = await campaignJobs(h, "th", 4);
  for (const j of jobs) {
    const state = await j!.getState();
    assert.ok(state === "waiting" || state === "delayed" || state === "prioritized", `job ${j!.id} handed back, is ${state}`);
    assert.equal(j!.attemptsMade, 0, "no attempt used");
  }
  assert.match(w.stderr(), /"event":"job:handed-back"/);
  assert.deepEqual(temporaryFiles(out), []);
  assert.equal((await readEpisodes(out)).length, 0, "cancelled episodes are not committed");
  await h.queue.obliterate({ force: true }).catch(() => undefined);
});
