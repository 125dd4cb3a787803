/**
 * deploy/prometheus with the real promtool (Debian package prometheus, installed by deploy/bootstrap.sh):
 * the scrape config and its rule files, the rules, their unit tests, and that every farm_* name the rules
 * select is one the farm really exports (with labels it really has).
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import {
  assertPromtoolOk,
  COMMON_LABELS,
  farmSeriesInfo,
  groupingLabels,
  PROM_DIR,
  recordingRules,
  RULES_FILE,
  ruleExpressions,
  selectedNames,
  selectorLabels,
} from "./deploy-helpers.ts";

test("promtool check config: deploy/prometheus/prometheus.yml with its rule files and target files", () => {
  const out = assertPromtoolOk(["check", "config", path.join(PROM_DIR, "prometheus.yml")]);
  assert.match(out, /SUCCESS: 1 rule files found/);
  assert.match(out, /SUCCESS: \d+ rules found/);
});

test("promtool check config: the compose stack's Prometheus config (prometheus-compose.yml)", () => {
  const file = path.join(PROM_DIR, "prometheus-compose.yml");
  assert.ok(existsSync(file), `${file} exists`);
  const out = assertPromtoolOk(["check", "config", file]);
  assert.match(out, /SUCCESS: 1 rule files found/);
});

test("promtool check rules and test rules: farm-rules.yml", () => {
  const out = assertPromtoolOk(["check", "rules", RULES_FILE]);
  assert.match(out, /SUCCESS: \d+ rules found/);
  const t = assertPromtoolOk(["test", "rules", path.join(PROM_DIR, "rules", "farm-rules.test.yml")]);
  assert.match(t, /SUCCESS/);
  assert.doesNotMatch(t, /FAILED/);
});

test("every alert has a unit test, severity and summary", async () => {
  const { readFileSync } = await import("node:fs");
  const rules = readFileSync(RULES_FILE, "utf8");
  const tests = readFileSync(path.join(PROM_DIR, "rules", "farm-rules.test.yml"), "utf8");
  const alerts = [...rules.matchAll(/^\s*- alert:\s*(\S+)/gm)].map((m) => m[1] ?? "");
  assert.ok(alerts.length >= 6, `alerts: ${alerts.join(", ")}`);
  for (const a of alerts) {
    assert.match(tests, new RegExp(`alertname: ${a}\\b[\\s\\S]*?exp_alerts:\\s*\\n\\s*- exp_labels`), `${a} has a unit test where it fires`);
    const block = rules.slice(rules.indexOf(`- alert: ${a}`)).split(/\n\s*- alert:/)[0] ?? "";
    assert.match(block, /severity: (critical|warning|info)/, `${a}: severity`);
    assert.match(block, /summary:/, `${a}: summary`);
  }
});

test("rules select only series the farm exports (or recording rules), with labels those series have", async () => {
  const info = await farmSeriesInfo();
  const recorded = recordingRules();
  assert.ok(recorded.size >= 8, `recording rules: ${[...recorded.keys()].join(", ")}`);
  for (const name of recorded.keys()) assert.match(name, /^[a-z_]+:[a-z_]+(:[a-z0-9_]+)?$/, `${name}: level:metric:operations`);
  const exprs = ruleExpressions();
  assert.ok(exprs.length > recorded.size);
  for (const { name, expr } of exprs) {
    for (const s of selectedNames(expr)) {
      if (s === "up" || s === "vector") continue;
      assert.ok(info.seriesNames.has(s) || recorded.has(s), `${name}: '${s}' is neither a farm metric (libs/metrics METRIC) nor a recording rule`);
    }
    for (const [series, labels] of selectorLabels(expr)) {
      const known = info.labelsOf(series);
      if (!known) continue; // up, recording rules
      for (const l of labels) assert.ok(known.has(l), `${name}: ${series} has no label '${l}' (has ${[...known].join(", ")})`);
    }
    // by (...) labels must exist on some series of the expression (or be job/instance).
    const farmSeries = selectedNames(expr).filter((s) => info.labelsOf(s));
    if (farmSeries.length === 0) continue;
    const anyLabels = new Set<string>(COMMON_LABELS);
    for (const s of farmSeries) for (const l of info.labelsOf(s) ?? []) anyLabels.add(l);
    for (const l of groupingLabels(expr)) assert.ok(anyLabels.has(l), `${name}: grouping label '${l}' is on none of ${farmSeries.join(", ")}`);
  }
});
