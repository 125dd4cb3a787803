/**
 * Naming rules in code, after prometheus.io/docs/practices/naming and what `promtool check metrics`
 * lints: legal names, `farm_` prefix, `_total` on counters only, base units, no reserved suffixes,
 * legal and bounded label names. Runs promtool too when it happens to be installed.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { createFarmMetrics, METRIC } from "../src/index.ts";
import { parseExposition } from "./exposition.ts";

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
// Units that are not base units, and words that mean time or size without saying the unit.
const NON_BASE_UNITS = /_(milliseconds|ms|microseconds|us|nanoseconds|ns|minutes|hours|days|kilobytes|kb|megabytes|mb|percent)(_|$)/;
const TIME_WORDS = /_(duration|latency|time|age|uptime)(_|$)/;
// Labels that would make series unbounded (one per episode, job, seed or device).
const UNBOUNDED_LABELS = new Set(["id", "episode", "episode_id", "job", "job_id", "seed", "serial", "device", "device_serial", "pid"]);

test("every farm metric follows the naming rules", async () => {
  const m = createFarmMetrics({ service: "test", collectDefault: false });
  const metrics = await m.registry.getMetricsAsJSON();
  const names = metrics.map((x) => x.name).sort();
  assert.deepEqual(names, Object.values(METRIC).sort(), "METRIC lists exactly the registered metrics");
  for (const x of metrics) {
    const type = String(x.type);
    const where = `${x.name} (${type})`;
    assert.match(x.name, NAME, where);
    assert.ok(x.name.startsWith("farm_"), `${where}: farm_ prefix`);
    assert.ok(!/__/.test(x.name), `${where}: no double underscore`);
    if (type === "counter") assert.ok(x.name.endsWith("_total"), `${where}: counters end in _total`);
    else assert.ok(!x.name.endsWith("_total"), `${where}: only counters end in _total`);
    assert.ok(!/_(count|sum|bucket)$/.test(x.name), `${where}: reserved suffix`);
    assert.ok(!NON_BASE_UNITS.test(x.name), `${where}: base units only`);
    if (TIME_WORDS.test(x.name)) assert.ok(x.name.endsWith("_seconds"), `${where}: time in seconds`);
    if (/_bytes/.test(x.name)) assert.ok(/_bytes(_total)?$/.test(x.name), `${where}: _bytes is the unit suffix`);
    assert.ok(!/_by_/.test(x.name), `${where}: no label names inside metric names`);
    assert.ok(x.help.length > 10, `${where}: help text`);
    const labelNames = new Set<string>();
    for (const v of (x as unknown as { values: { labels: Record<string, unknown> }[] }).values) for (const l of Object.keys(v.labels)) labelNames.add(l);
    for (const l of labelNames) {
      assert.match(l, LABEL_NAME, `${where}: label ${l}`);
      assert.ok(!l.startsWith("__"), `${where}: label ${l} is reserved`);
      assert.ok(!UNBOUNDED_LABELS.has(l), `${where}: label ${l} is unbounded`);
    }
  }
});

test("the exposition parses; HELP and TYPE for every family; service label everywhere", async () => {
  const m = createFarmMetrics({ service: "worker", defaultLabels: { host: "h1" } });
  m.episodeFinished({ taskId: "t", outcome: "terminated", cause: "episode_end", durationSec: 1, steps: 1, reward: 0 });
  const exp = parseExposition(await m.metricsText());
  for (const s of exp.samples) {
    const family = exp.families.get(s.name) ?? exp.families.get(s.name.replace(/_(bucket|sum|count)$/, ""));
    assert.ok(family, `sample ${s.name} has a family`);
    assert.ok(family.help !== "", `${family.name} has HELP`);
    assert.equal(s.labels.service, "worker", s.name);
    assert.equal(s.labels.host, "h1", s.name);
  }
  // Default process metrics are on by default (and are the only names without the farm_ prefix).
  assert.ok(exp.families.has("process_cpu_user_seconds_total"));
  for (const name of exp.families.keys()) assert.ok(name.startsWith("farm_") || name.startsWith("process_") || name.startsWith("nodejs_"), name);
});

test("promtool check metrics, when promtool is installed", async (t) => {
  const which = spawnSync("promtool", ["--version"], { encoding: "utf8" });
  if (which.error) {
    // Visible in the report as a skip, not a silent pass (deploy/bootstrap.sh installs promtool).
    t.skip("promtool not installed (deploy/bootstrap.sh installs it); the rules above are checked in code");
    return;
  }
  const m = createFarmMetrics({ service: "test", collectDefault: false });
  const res = spawnSync("promtool", ["check", "metrics"], { input: await m.metricsText(), encoding: "utf8" });
  assert.equal(res.status, 0, `${res.stdout}${res.stderr}`);
});
