/**
 * The farm as a user runs it, watched by a real Prometheus with the shipped config: private Redis and
 * adb server, `farm sim` (simulated emulators), `farm scheduler` and `farm worker` as processes, and
 * Prometheus started from a copy of deploy/prometheus/prometheus.yml (scrape and evaluation interval
 * shortened to 1 s, targets files pointing at the processes' ports, the self-scrape of :9090 left out)
 * with deploy/prometheus/rules. Campaigns submitted with `farm submit --api` must show up in
 * Prometheus exactly as the scheduler counted them (episodes by outcome and cause, steps), with one
 * trajectory file per episode, the scheduler's campaign and enqueue counters, and the recording rules
 * for devices, queue depth and episodes/s.
 *
 * Why two campaigns: farm_episodes_total{task,outcome,cause} has no series until the first episode
 * with those labels is counted, and rate() counts only increases between samples it has. The main
 * campaign takes about one scrape interval (8 short episodes on 2 devices, ~1.3 s), so when every
 * episode finished between two scrapes the series' first sample was already its final value and
 * farm:episodes:rate5m stayed 0 for the whole 5 m window. So a first campaign of one episode (same
 * task, policy and limits, hence the same labels) runs first, and the main campaign is submitted only
 * once Prometheus holds a sample of that count: the main campaign then raises a series Prometheus
 * already has, whatever the scrape timing.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { after, before, test } from "node:test";
import { startManagedChild, startAdbServer, startRedis, type LocalAdbServer, type LocalRedis, type ManagedChild } from "@farm/local-services";
import { localPrometheus, PROM_DIR, REPO, requireBinary, type PromSample } from "./deploy-helpers.ts";

const run = promisify(execFile);
const FARM = path.join(REPO, "services", "cli", "bin", "farm.js");
const EPISODES = 8;
const FIRST_EPISODES = 1;
const DEVICES = 2;

let tmp = "";
let redis: LocalRedis | undefined;
let adb: LocalAdbServer | undefined;
const children: ManagedChild[] = [];
let apiUrl = "";
let env: NodeJS.ProcessEnv = {};

/** Spawns `farm <args>` and waits for `pattern` in its output; returns the match. */
async function startFarm(args: string[], pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> {
  const c = startManagedChild(process.execPath, [FARM, ...args], env);
  children.push(c);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = pattern.exec(c.output());
    if (m) return m;
    if (c.process.exitCode !== null) assert.fail(`farm ${args[0]} exited (${c.process.exitCode}):\n${c.output()}`);
    if (Date.now() > deadline) assert.fail(`farm ${args[0]}: no ${pattern} within ${timeoutMs} ms:\n${c.output()}`);
    await sleep(100);
  }
}

const prom = localPrometheus({
  waitMs: 30_000,
  diagnostics: () => `--- farm processes ---\n${children.map((c) => c.output().slice(-1500)).join("\n---\n")}`,
});
const { query, eventually } = prom;

const byLabel = (samples: PromSample[], label: string): Record<string, number> =>
  Object.fromEntries(samples.filter((s) => Number(s.value[1]) !== 0).map((s) => [s.metric[label] ?? "", Number(s.value[1])]));

before(async () => {
  requireBinary("prometheus");
  tmp = mkdtempSync(path.join(os.tmpdir(), "farm-deploy-e2e-"));
  redis = await startRedis();
  adb = await startAdbServer();
  env = {
    ...process.env,
    REDIS_URL: redis.url,
    FARM_QUEUE_PREFIX: `{farm-deploy-${process.pid}}`,
    FARM_LOG_LEVEL: "warn",
    FARM_API_URL: "",
    FARM_API_TOKEN: "",
  };
  const adbPort = String(adb.port);
  // The scheduler needs only Redis: it starts beside the devices and the worker (which waits for the devices).
  const [sched, worker] = await Promise.all([
    startFarm(["scheduler", "--port", "0", "--tasks", "tasks"], /"event":"scheduler:ready","api":"(http:\/\/[^"]+)"/),
    startFarm(["sim", "--adb-port", adbPort, "--devices", String(DEVICES)], new RegExp(`ready devices=${DEVICES}`)).then(() =>
      startFarm(
        ["worker", "--adb-port", adbPort, "--metrics-port", "0", "--tasks", "tasks", "--out", path.join(tmp, "trajectories"), "--settle-ms", "20", "--name", "deploy-e2e"],
        /"event":"worker:ready","metrics":"http:\/\/([^"/]+)/,
      ),
    ),
  ]);
  apiUrl = sched[1] ?? "";
  const workerTarget = worker[1] ?? "";
  const schedTarget = new URL(apiUrl).host;

  // The shipped config, with test intervals, our targets, and no scrape of :9090.
  const promDir = path.join(tmp, "prometheus");
  mkdirSync(path.join(promDir, "targets"), { recursive: true });
  symlinkSync(path.join(PROM_DIR, "rules"), path.join(promDir, "rules"));
  const shipped = readFileSync(path.join(PROM_DIR, "prometheus.yml"), "utf8");
  const config = shipped
    .replace(/scrape_interval: 15s/, "scrape_interval: 1s")
    .replace(/scrape_timeout: 10s/, "scrape_timeout: 1s")
    .replace(/evaluation_interval: 15s/, "evaluation_interval: 1s")
    .replace(/\n {2}- job_name: prometheus\n(?: {4,}.*\n?)*/, "\n");
  assert.notEqual(config, shipped);
  assert.doesNotMatch(config, /9090|15s|10s/, "intervals replaced and the self-scrape removed");
  writeFileSync(path.join(promDir, "prometheus.yml"), config);
  writeFileSync(path.join(promDir, "targets", "scheduler.yml"), `- targets: ["${schedTarget}"]\n`);
  writeFileSync(path.join(promDir, "targets", "workers.yml"), `- targets: ["${workerTarget}"]\n`);

  await prom.start(path.join(promDir, "prometheus.yml"), path.join(tmp, "tsdb"));
  await eventually("both farm targets up", async () => {
    const up = await query("up");
    assert.deepEqual(byLabel(up, "job"), { "farm-scheduler": 1, "farm-worker": 1 });
  });
});

after(async () => {
  await prom.close();
  // Worker and scheduler drain on SIGTERM; then the simulated devices, adb and Redis.
  for (const c of [...children].reverse()) await c.close();
  await adb?.close();
  await redis?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

interface Summary {
  state: string;
  completed: number;
  byOutcome: Record<string, number>;
  byCause: Record<string, number>;
  totalSteps: number;
}

/** `farm submit --api` then `farm watch` until the campaign ends; its summary, completed with every episode. */
async function runCampaign(episodes: number): Promise<Summary> {
  const submitted = await run(process.execPath, [FARM, "submit", "tasks/classic_2048.textproto", "--episodes", String(episodes), "--max-steps", "15", "--seed", "7", "--api", apiUrl], { cwd: REPO, env, timeout: 30_000 });
  const id = submitted.stdout.trim();
  const watched = await run(process.execPath, [FARM, "watch", id, "--api", apiUrl, "--interval-ms", "200"], { cwd: REPO, env, timeout: 90_000 });
  const summary = JSON.parse(watched.stdout) as Summary;
  assert.equal(summary.state, "completed", watched.stdout);
  assert.equal(summary.completed, episodes, watched.stdout);
  return summary;
}

const addCounts = (a: Record<string, number>, b: Record<string, number>): Record<string, number> => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
};

test("campaigns run by farm scheduler + farm worker show up in Prometheus as the scheduler counted them", async () => {
  // The first campaign's episode, in Prometheus before the main campaign starts (see the file comment).
  const first = await runCampaign(FIRST_EPISODES);
  await eventually("the first campaign scraped", async () => assert.deepEqual((await query('sum(farm_episodes_total{job="farm-worker"})')).map((s) => Number(s.value[1])), [FIRST_EPISODES]));
  const scrapedFirst = await query('farm_episodes_total{job="farm-worker"}');

  const main = await runCampaign(EPISODES);
  const total = FIRST_EPISODES + EPISODES;
  const byOutcome = addCounts(first.byOutcome, main.byOutcome);
  const byCause = addCounts(first.byCause, main.byCause);
  const totalSteps = first.totalSteps + main.totalSteps;

  await eventually("every episode scraped", async () => assert.deepEqual((await query('sum(farm_episodes_total{job="farm-worker"})')).map((s) => Number(s.value[1])), [total]));
  // What makes farm:episodes:rate5m > 0 certain below: the main campaign raised a series Prometheus had before it.
  const sameSeries = (a: PromSample, b: PromSample) => JSON.stringify(Object.entries(a.metric).sort()) === JSON.stringify(Object.entries(b.metric).sort());
  const scrapedTotal = await query('farm_episodes_total{job="farm-worker"}');
  assert.ok(
    scrapedFirst.some((f) => scrapedTotal.some((t) => sameSeries(f, t) && Number(t.value[1]) > Number(f.value[1]))),
    `a series of the first campaign grew: ${JSON.stringify(scrapedFirst)} then ${JSON.stringify(scrapedTotal)}`,
  );
  assert.deepEqual(byLabel(await query("sum by (outcome) (farm_episodes_total)"), "outcome"), byOutcome);
  assert.deepEqual(byLabel(await query("sum by (cause) (farm_episodes_total)"), "cause"), byCause);
  assert.deepEqual(byLabel(await query("sum by (task) (farm_steps_total)"), "task"), { classic_2048: totalSteps });
  assert.deepEqual(byLabel(await query("sum by (service) (farm_episodes_total)"), "service"), { worker: total });

  // One trajectory file per episode, on disk and in the counter.
  const files = readdirSync(path.join(tmp, "trajectories"), { recursive: true }).map(String).filter((f) => f.endsWith(".avro") && !f.includes(".staging"));
  assert.equal(files.length, total, files.join(", "));
  assert.deepEqual((await query("sum(farm_trajectory_files_total)")).map((s) => Number(s.value[1])), [total]);
  assert.ok(Number((await query("sum(farm_trajectory_bytes_total)"))[0]?.value[1]) > 0);

  // The scheduler's own counters, from its /metrics on the API port.
  assert.deepEqual(byLabel(await query('sum by (job) (farm_campaigns_submitted_total)'), "job"), { "farm-scheduler": 2 });
  assert.deepEqual(byLabel(await query("sum by (task) (farm_jobs_enqueued_total)"), "task"), { classic_2048: total });
  assert.ok(Number((await query('sum(farm_job_start_latency_seconds_count{job="farm-worker"})'))[0]?.value[1]) >= 1);
  assert.ok(Number((await query('sum(farm_step_phase_duration_seconds_count{phase="action"})'))[0]?.value[1]) >= totalSteps);

  // Recording rules from farm-rules.yml over the real processes' series.
  await eventually("devices ready", async () => assert.deepEqual(byLabel(await query("state:farm_devices:sum"), "state"), { ready: DEVICES }));
  await eventually("queue drained", async () => {
    const q = byLabel(await query('queue_state:farm_queue_jobs:max{queue="episodes"}'), "state");
    assert.equal(q.waiting, undefined, JSON.stringify(q));
    assert.equal(q.active, undefined, JSON.stringify(q));
    assert.equal(q.completed, total, JSON.stringify(q));
  });
  // Evaluated every second over the scrapes that saw the main campaign's increase.
  await eventually("episodes/s recorded", async () => assert.ok(Number((await query("farm:episodes:rate5m"))[0]?.value[1]) > 0));
  const firing = (await query('ALERTS{alertstate="firing"}')).map((s) => s.metric.alertname);
  assert.deepEqual(firing, [], "no alert fires on a healthy farm");
});
