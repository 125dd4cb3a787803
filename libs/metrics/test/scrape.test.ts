import assert from "node:assert/strict";
import { test } from "node:test";
import { createFarmMetrics, METRIC, startMetricsServer } from "../src/index.ts";
import { parseExposition, valueOf } from "./exposition.ts";

const RESERVED = (p: number) => p === 5037 || p === 6379 || (p >= 5554 && p <= 5585);

test("a scrape over HTTP shows what the methods recorded", async () => {
  const metrics = createFarmMetrics({ service: "worker" });
  const server = await startMetricsServer({ port: 0, metrics });
  try {
    assert.ok(server.port > 0 && !RESERVED(server.port));
    assert.equal(server.url, `http://127.0.0.1:${server.port}`);

    metrics.episodeFinished({ taskId: "classic_2048", outcome: "terminated", cause: "episode_end", durationSec: 12.5, steps: 40, reward: 128 });
    metrics.episodeFinished({ taskId: "classic_2048", outcome: "truncated", cause: "step_limit", durationSec: 30, steps: 101, reward: -1 });
    metrics.episodeFinished({ taskId: "catch_the_ball", outcome: "truncated", cause: "device_lost", durationSec: 3, steps: 2, reward: 0 });
    for (let i = 0; i < 5; i++) metrics.stepPhase("policy", 0.002);
    metrics.stepPhase("observation", 0.04);
    metrics.adbCall({ op: "shell", status: "ok", seconds: 0.01 });
    metrics.adbCall({ op: "shell", status: "timeout", seconds: 5 });
    metrics.adbCall({ op: "screenshot", status: "adb_error", seconds: 0.2 });
    metrics.setDeviceStates({ idle: 3, busy: 1 });
    metrics.recovery("reconnect");
    metrics.recovery("relaunch");
    metrics.recovery("relaunch");
    metrics.trajectoryWritten({ bytes: 1000 });
    metrics.trajectoryWritten({ bytes: 500, files: 2 });
    metrics.logLineMalformed();
    metrics.extraDropped("classic_2048", 3);
    metrics.jobStarted(0.7);
    metrics.jobFetchBurst(5);
    metrics.jobFetchBurst(63);
    metrics.campaignSubmitted();
    metrics.jobsEnqueued("classic_2048", 50);
    metrics.policyError("timeout");
    metrics.setQueueDepthSource(async () => [
      { queue: "episodes", state: "waiting", count: 47 },
      { queue: "episodes", state: "active", count: 3 },
    ]);

    const res = await fetch(`${server.url}/metrics`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), metrics.contentType);
    assert.match(metrics.contentType, /^text\/plain; version=0\.0\.4/);
    const exp = parseExposition(await res.text());

    assert.equal(exp.families.get(METRIC.episodes)?.type, "counter");
    assert.equal(valueOf(exp, METRIC.episodes, { task: "classic_2048", outcome: "terminated", cause: "episode_end" }), 1);
    assert.equal(valueOf(exp, METRIC.episodes, { task: "catch_the_ball", outcome: "truncated", cause: "device_lost" }), 1);
    assert.equal(valueOf(exp, `${METRIC.episodeDuration}_count`, { task: "classic_2048", outcome: "truncated" }), 1);
    assert.equal(valueOf(exp, `${METRIC.episodeDuration}_bucket`, { task: "classic_2048", outcome: "terminated", le: "16" }), 1);
    assert.equal(valueOf(exp, `${METRIC.episodeDuration}_bucket`, { task: "classic_2048", outcome: "terminated", le: "8" }), 0);
    assert.equal(valueOf(exp, METRIC.steps, { task: "classic_2048" }), 141);
    assert.equal(valueOf(exp, `${METRIC.episodeReward}_sum`, { task: "classic_2048" }), 127);
    assert.equal(valueOf(exp, `${METRIC.stepPhaseDuration}_count`, { phase: "policy" }), 5);
    assert.equal(valueOf(exp, `${METRIC.stepPhaseDuration}_bucket`, { phase: "observation", le: "0.025" }), 0);
    assert.equal(valueOf(exp, `${METRIC.stepPhaseDuration}_bucket`, { phase: "observation", le: "0.05" }), 1);
    assert.equal(valueOf(exp, METRIC.adbCalls, { op: "shell", status: "ok" }), 1);
    assert.equal(valueOf(exp, METRIC.adbErrors, { kind: "timeout" }), 1);
    assert.equal(valueOf(exp, METRIC.adbErrors, { kind: "adb_error" }), 1);
    assert.equal(valueOf(exp, METRIC.adbErrors, { kind: "internal_error" }), 0, "error kinds start at zero");
    assert.equal(valueOf(exp, `${METRIC.adbCallDuration}_count`, { op: "shell" }), 2);
    assert.equal(valueOf(exp, METRIC.devices, { state: "idle" }), 3);
    assert.equal(valueOf(exp, METRIC.recoveries, { cause: "relaunch" }), 2);
    assert.equal(valueOf(exp, METRIC.trajectoryBytes), 1500);
    assert.equal(valueOf(exp, METRIC.trajectoryFiles), 3);
    assert.equal(valueOf(exp, METRIC.logLinesMalformed), 1);
    assert.equal(valueOf(exp, METRIC.extrasDropped, { task: "classic_2048" }), 3);
    assert.equal(valueOf(exp, `${METRIC.jobStartLatency}_count`), 1);
    assert.equal(valueOf(exp, `${METRIC.jobFetchBurst}_count`), 2);
    assert.equal(valueOf(exp, `${METRIC.jobFetchBurst}_sum`), 68);
    assert.equal(valueOf(exp, `${METRIC.jobFetchBurst}_bucket`, { le: "8" }), 1, "5 falls in le=8, 63 does not");
    assert.equal(valueOf(exp, METRIC.campaignsSubmitted), 1);
    assert.equal(valueOf(exp, METRIC.jobsEnqueued, { task: "classic_2048" }), 50);
    assert.equal(valueOf(exp, METRIC.policyErrors, { code: "timeout" }), 1);
    assert.equal(valueOf(exp, METRIC.queueJobs, { queue: "episodes", state: "waiting" }), 47);
    assert.equal(valueOf(exp, METRIC.queueJobs, { queue: "episodes", state: "active" }), 3);
    assert.equal(valueOf(exp, METRIC.labelOverflow), undefined, "nothing overflowed");

    // Device states are replaced, not merged.
    metrics.setDeviceStates({ busy: 4 });
    const again = parseExposition(await (await fetch(`${server.url}/metrics`)).text());
    assert.equal(valueOf(again, METRIC.devices, { state: "idle" }), undefined);
    assert.equal(valueOf(again, METRIC.devices, { state: "busy" }), 4);
  } finally {
    await server.close();
  }
});

test("device states from a source are read at each scrape", async () => {
  const metrics = createFarmMetrics({ service: "worker", collectDefault: false });
  const counts = new Map([["ready", 2], ["busy", 1]]);
  metrics.setDeviceStateSource(() => Object.fromEntries(counts));
  const scrape = async () => parseExposition(await metrics.registry.metrics());
  const first = await scrape();
  assert.equal(valueOf(first, METRIC.devices, { state: "ready" }), 2);
  assert.equal(valueOf(first, METRIC.devices, { state: "busy" }), 1);
  counts.delete("ready");
  counts.set("busy", 3);
  const second = await scrape();
  assert.equal(valueOf(second, METRIC.devices, { state: "ready" }), undefined, "a state gone from the source drops out");
  assert.equal(valueOf(second, METRIC.devices, { state: "busy" }), 3);
});

test("healthz, 404, 405; close is idempotent", async () => {
  let healthy = true;
  const metrics = createFarmMetrics({ service: "scheduler", collectDefault: false });
  const server = await startMetricsServer({ port: 0, metrics, healthy: () => healthy });
  try {
    const ok = await fetch(`${server.url}/healthz`);
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), "ok\n");
    healthy = false;
    assert.equal((await fetch(`${server.url}/healthz`)).status, 503);
    assert.equal((await fetch(`${server.url}/nope`)).status, 404);
    assert.equal((await fetch(`${server.url}/metrics`, { method: "POST" })).status, 405);
  } finally {
    await server.close();
    await server.close();
  }
  await assert.rejects(fetch(`${server.url}/metrics`));
});

test("a failing or hanging queue-depth source never fails the scrape", async () => {
  const errors: string[] = [];
  const metrics = createFarmMetrics({
    service: "scheduler",
    collectDefault: false,
    queueDepthTimeoutMs: 100,
    onCollectError: ({ source, error }) => errors.push(`${source}: ${error.message}`),
  });
  metrics.setQueueDepthSource(async () => {
    throw new Error("redis down");
  });
  let exp = parseExposition(await metrics.metricsText());
  assert.equal(valueOf(exp, METRIC.collectErrors, { source: "queue_depth" }), 1);
  assert.equal(exp.samples.filter((s) => s.name === METRIC.queueJobs).length, 0);

  metrics.setQueueDepthSource(() => new Promise(() => {}));
  const started = Date.now();
  exp = parseExposition(await metrics.metricsText());
  assert.ok(Date.now() - started < 1000);
  assert.equal(valueOf(exp, METRIC.collectErrors, { source: "queue_depth" }), 2);
  assert.deepEqual(errors, ["queue_depth: redis down", "queue_depth: queue depth source took longer than 100 ms"]);

  metrics.setQueueDepthSource(async () => [{ queue: "episodes", state: "failed", count: 2 }]);
  exp = parseExposition(await metrics.metricsText());
  assert.equal(valueOf(exp, METRIC.queueJobs, { queue: "episodes", state: "failed" }), 2);
});

test("port in use → a clear error", async () => {
  const metrics = createFarmMetrics({ service: "x", collectDefault: false });
  const first = await startMetricsServer({ port: 0, metrics });
  try {
    await assert.rejects(startMetricsServer({ port: first.port, metrics }), new RegExp(`cannot listen on 127\\.0\\.0\\.1:${first.port}`));
  } finally {
    await first.close();
  }
});
