/**
 * A REAL Prometheus (the Debian package's /usr/bin/prometheus) on a free loopback port, with its own
 * config and data folder, scraping every second two /metrics endpoints of @farm/metrics served from
 * this process: a "worker" fed like a finished campaign and a "scheduler" with queue depth. It loads
 * deploy/prometheus/rules/farm-rules.yml. Checked through the HTTP API: raw sums equal what was
 * recorded, recording rules (truncation ratio by task, devices by state, queue depth) equal what the
 * recorded numbers give, every rule evaluates without error, an alert goes pending, and every query
 * of the Grafana dashboard runs and each panel has data.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, test } from "node:test";
import { createFarmMetrics, startMetricsServer, type FarmMetrics, type MetricsServer } from "@farm/metrics";
import {
  allPanels,
  localPrometheus,
  readDashboard,
  recordingRules,
  requireBinary,
  RULES_FILE,
  substituteGrafanaVariables,
  type PromSample,
} from "./deploy-helpers.ts";

type EndCause = Parameters<FarmMetrics["episodeFinished"]>[0]["cause"];
type Outcome = Parameters<FarmMetrics["episodeFinished"]>[0]["outcome"];

let dir = "";
const prom = localPrometheus({ waitMs: 15_000 });
const { api, query, eventually } = prom;
let workerServer: MetricsServer | undefined;
let schedulerServer: MetricsServer | undefined;
const worker = createFarmMetrics({ service: "worker" });
const scheduler = createFarmMetrics({ service: "scheduler" });
const queueCounts: Record<string, number> = { waiting: 12, active: 4, delayed: 0, completed: 26, failed: 0 };

/** Records `n` finished episodes of one kind the way the worker does per committed episode. */
function episodes(n: number, taskId: string, outcome: Outcome, cause: EndCause, steps: number, reward: number): void {
  for (let i = 0; i < n; i++) {
    worker.jobStarted(0.2 + i / 100);
    for (let s = 0; s < steps; s++) {
      worker.stepPhase("policy", 0.002);
      worker.stepPhase("action", 0.03);
      worker.stepPhase("observation", 0.08);
      worker.stepPhase("log", 0.01);
      worker.adbCall({ op: "step_tap", status: "ok", seconds: 0.03 });
      worker.adbCall({ op: "screenshot", status: "ok", seconds: 0.08 });
    }
    worker.trajectoryWritten({ bytes: 1000 * steps });
    worker.episodeFinished({ taskId, outcome, cause, durationSec: steps * 0.15, steps, reward });
  }
}

const byLabel = (samples: PromSample[], label: string): Record<string, number> =>
  Object.fromEntries(samples.map((s) => [s.metric[label] ?? "", Number(s.value[1])]));

before(async () => {
  requireBinary("prometheus");
  // Phase A of the campaign, recorded before the first scrape so every series starts in the same scrape.
  episodes(20, "classic_2048", "terminated", "episode_end", 6, 512);
  episodes(4, "classic_2048", "truncated", "step_limit", 10, 128);
  episodes(2, "classic_2048", "truncated", "device_lost", 3, 0);
  episodes(10, "catch_the_ball", "terminated", "episode_end", 4, 1);
  episodes(6, "catch_the_ball", "truncated", "time_limit", 8, -1);
  worker.adbCall({ op: "shell", status: "timeout", seconds: 5 });
  worker.adbCall({ op: "shell", status: "adb_error", seconds: 0.01 });
  worker.setDeviceStates({ ready: 3, busy: 1, unbound: 1 });
  worker.recovery("device_lost");
  worker.policyError("timeout");
  worker.logLineMalformed(2);
  worker.extraDropped("classic_2048");
  worker.stepPhase("policy", Number.NaN); // dropped and counted in farm_metric_invalid_values_total
  worker.episodeFinished({ taskId: "not a task id!", outcome: "terminated", cause: "episode_end", durationSec: 1, steps: 1, reward: 0 });
  scheduler.campaignSubmitted();
  scheduler.jobsEnqueued("classic_2048", 36);
  scheduler.jobsEnqueued("catch_the_ball", 26);
  scheduler.setQueueDepthSource(async () => Object.entries(queueCounts).map(([state, count]) => ({ queue: "episodes", state, count })));

  workerServer = await startMetricsServer({ port: 0, metrics: worker });
  schedulerServer = await startMetricsServer({ port: 0, metrics: scheduler });
  dir = mkdtempSync(path.join(os.tmpdir(), "farm-prometheus-"));
  const config = path.join(dir, "prometheus.yml");
  writeFileSync(
    config,
    [
      "global:",
      "  scrape_interval: 1s",
      "  scrape_timeout: 1s",
      "  evaluation_interval: 1s",
      "rule_files:",
      `  - ${JSON.stringify(RULES_FILE)}`,
      "scrape_configs:",
      "  - job_name: farm-worker",
      "    static_configs:",
      `      - targets: ["127.0.0.1:${workerServer.port}"]`,
      "  - job_name: farm-scheduler",
      "    static_configs:",
      `      - targets: ["127.0.0.1:${schedulerServer.port}"]`,
      "",
    ].join("\n"),
  );
  await prom.start(config, path.join(dir, "data"));
  await eventually("prometheus ready", async () => {
    const res = await fetch(`${prom.base}/-/ready`);
    assert.equal(res.status, 200);
  });
});

after(async () => {
  await prom.close();
  await workerServer?.close();
  await schedulerServer?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("a real Prometheus scrapes the worker and the scheduler and evaluates farm-rules.yml", async () => {
  await eventually("both targets up", async () => {
    const data = (await api("/api/v1/targets?state=active")) as { activeTargets: { labels: { job: string }; health: string; lastError: string }[] };
    const health = Object.fromEntries(data.activeTargets.map((t) => [t.labels.job, `${t.health} ${t.lastError}`.trim()]));
    assert.deepEqual(health, { "farm-worker": "up", "farm-scheduler": "up" });
  });

  // Phase A is in: 42 episodes (+1 with a malformed task id, counted under task="other").
  await eventually("phase A scraped", async () => assert.deepEqual((await query("sum(farm_episodes_total)")).map((s) => s.value[1]), ["43"]));
  assert.deepEqual(byLabel(await query('sum by (task) (farm_episodes_total{job="farm-worker"})'), "task"), { classic_2048: 26, catch_the_ball: 16, other: 1 });
  assert.deepEqual(byLabel(await query("sum by (service) (farm_episodes_total)"), "service"), { worker: 43 });
  assert.deepEqual(
    byLabel(await query('farm_metric_label_overflow_total{metric="farm_episodes_total"}'), "label"),
    { task: 1 },
  );

  // Phase B, after at least one scrape of phase A: only series that already exist grow, so the
  // ratio of their rates is exactly the ratio of the phase B increments.
  await sleep(1200);
  episodes(6, "classic_2048", "terminated", "episode_end", 6, 1024);
  episodes(3, "classic_2048", "truncated", "step_limit", 10, 64);
  episodes(1, "classic_2048", "truncated", "device_lost", 3, 0);
  episodes(5, "catch_the_ball", "terminated", "episode_end", 4, 1);
  episodes(5, "catch_the_ball", "truncated", "time_limit", 8, -1);
  queueCounts.waiting = 7;
  queueCounts.completed = 46;
  worker.setDeviceStates({ ready: 2, busy: 2, unbound: 1 });

  await eventually("phase B scraped", async () => assert.deepEqual((await query("sum(farm_episodes_total)")).map((s) => s.value[1]), ["63"]));
  assert.deepEqual(byLabel(await query("sum by (outcome) (farm_episodes_total)"), "outcome"), { terminated: 42, truncated: 21 });
  assert.deepEqual(byLabel(await query("sum by (task) (farm_steps_total)"), "task"), { classic_2048: 26 * 6 + 7 * 10 + 3 * 3, catch_the_ball: 15 * 4 + 11 * 8, other: 1 });
  assert.deepEqual((await query("sum(farm_trajectory_bytes_total)")).map((s) => Number(s.value[1])), [1000 * (26 * 6 + 7 * 10 + 3 * 3 + 15 * 4 + 11 * 8)]);
  assert.deepEqual(byLabel(await query('sum by (kind) (farm_adb_errors_total{kind=~"timeout|adb_error"})'), "kind"), { timeout: 1, adb_error: 1 });

  // Recording rules, evaluated by Prometheus from the rules file.
  const rules = recordingRules();
  for (const name of ["task:farm_episodes_truncated:ratio_rate5m", "state:farm_devices:sum", "queue_state:farm_queue_jobs:max", "farm:episodes:rate5m"]) {
    assert.ok(rules.has(name), `${name} is a recording rule of farm-rules.yml`);
  }
  await eventually("truncation ratio by task from phase B (3+1 of 10, 5 of 10)", async () => {
    const r = byLabel(await query("task:farm_episodes_truncated:ratio_rate5m"), "task");
    assert.deepEqual(Object.keys(r).sort(), ["catch_the_ball", "classic_2048"]);
    assert.ok(Math.abs((r.classic_2048 ?? 0) - 0.4) < 1e-9, `classic_2048: ${r.classic_2048}`);
    assert.ok(Math.abs((r.catch_the_ball ?? 0) - 0.5) < 1e-9, `catch_the_ball: ${r.catch_the_ball}`);
  });
  await eventually("devices by state", async () => assert.deepEqual(byLabel(await query("state:farm_devices:sum"), "state"), { ready: 2, busy: 2, unbound: 1 }));
  await eventually("queue depth by state", async () => {
    const samples = await query("queue_state:farm_queue_jobs:max");
    assert.ok(samples.every((s) => s.metric.queue === "episodes"));
    assert.deepEqual(byLabel(samples, "state"), { waiting: 7, active: 4, delayed: 0, completed: 46, failed: 0 });
  });
  const rate = await query("farm:episodes:rate5m");
  assert.equal(rate.length, 1);
  assert.ok(Number(rate[0]?.value[1]) > 0, "episodes/s > 0");

  // Every rule evaluated without error; the unbound device makes FarmDeviceNotUsable pending (for: 10m).
  await eventually("every rule evaluated once, without error", async () => {
    const data = (await api("/api/v1/rules")) as { groups: { name: string; rules: { name: string; health: string; lastError?: string }[] }[] };
    const all = data.groups.flatMap((g) => g.rules);
    assert.ok(all.length >= rules.size);
    const notOk = all.filter((r) => r.health !== "ok").map((r) => `${r.name}: ${r.health} ${r.lastError ?? ""}`);
    assert.deepEqual(notOk, []);
  });
  await eventually("FarmDeviceNotUsable pending", async () => {
    const data = (await api("/api/v1/alerts")) as { alerts: { labels: Record<string, string>; state: string }[] };
    const a = data.alerts.find((x) => x.labels.alertname === "FarmDeviceNotUsable");
    assert.ok(a, `alerts: ${JSON.stringify(data.alerts.map((x) => x.labels.alertname))}`);
    assert.equal(a.state, "pending");
    assert.equal(a.labels.job, "farm-worker");
    assert.equal(a.labels.instance, `127.0.0.1:${workerServer?.port}`);
  });
});

test("every query of the Grafana dashboard runs on the real Prometheus and every panel has data", async () => {
  const d = readDashboard();
  const empty: string[] = [];
  for (const p of allPanels(d.panels)) {
    if (p.type === "row") continue;
    let series = 0;
    for (const t of p.targets ?? []) {
      const q = substituteGrafanaVariables(String(t.expr), "1m");
      series += (await query(q)).length;
    }
    if (series === 0) empty.push(String(p.title));
  }
  assert.deepEqual(empty, [], "panels without data for a campaign");
});
