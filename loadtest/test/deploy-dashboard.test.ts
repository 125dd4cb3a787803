/**
 * deploy/grafana/farm-dashboard.json without Grafana: the JSON structure Grafana needs to import it
 * (unique panel ids, sane grid, datasource variable, every panel with queries), every query parsed by
 * promtool (extracted into a temporary rules file with Grafana variables substituted), and only farm
 * metric names and labels that exist in @farm/metrics.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import {
  allPanels,
  assertPromtoolOk,
  COMMON_LABELS,
  dashboardExpressions,
  farmSeriesInfo,
  groupingLabels,
  promtool,
  readDashboard,
  selectedNames,
  selectorLabels,
  substituteGrafanaVariables,
} from "./deploy-helpers.ts";

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);

test("dashboard: top-level fields, templating, unique ids, grid", () => {
  const d = readDashboard();
  assert.equal(typeof d.title, "string");
  assert.match(String(d.uid), /^[a-zA-Z0-9_-]{1,40}$/, "uid: Grafana allows up to 40 of [a-zA-Z0-9_-]");
  assert.ok(isInt(d.schemaVersion) && d.schemaVersion >= 30, "schemaVersion");
  const time = d.time as { from?: unknown; to?: unknown } | undefined;
  assert.ok(typeof time?.from === "string" && typeof time.to === "string", "time range");

  const vars = ((d.templating as { list?: unknown[] } | undefined)?.list ?? []) as { name?: unknown; type?: unknown; query?: unknown }[];
  const varNames = vars.map((v) => String(v.name));
  assert.equal(new Set(varNames).size, varNames.length, "unique variable names");
  const ds = vars.find((v) => v.type === "datasource");
  assert.ok(ds, "a datasource variable");
  assert.equal(ds.query, "prometheus");

  const panels = allPanels(d.panels);
  assert.ok(panels.length >= 10);
  const ids = panels.map((p) => p.id);
  for (const id of ids) assert.ok(isInt(id) && id > 0, `panel id ${String(id)}`);
  assert.equal(new Set(ids).size, ids.length, "unique panel ids");

  const cells = new Map<string, string>();
  for (const p of panels) {
    const where = `panel ${String(p.id)} '${String(p.title)}'`;
    assert.equal(typeof p.type, "string", where);
    assert.ok(typeof p.title === "string" && p.title.length > 0, `${where}: title`);
    const g = p.gridPos;
    assert.ok(g && isInt(g.x) && isInt(g.y) && isInt(g.w) && isInt(g.h), `${where}: gridPos x,y,w,h are integers`);
    const [gx, gy, gw, gh] = [g.x, g.y, g.w, g.h] as number[] as [number, number, number, number];
    assert.ok(gx >= 0 && gy >= 0 && gw >= 1 && gh >= 1 && gx + gw <= 24, `${where}: gridPos inside the 24-column grid`);
    for (let x = gx; x < gx + gw; x++)
      for (let y = gy; y < gy + gh; y++) {
        const other = cells.get(`${x},${y}`);
        assert.equal(other, undefined, `${where} overlaps ${other} at ${x},${y}`);
        cells.set(`${x},${y}`, where);
      }
    if (p.type === "row") continue;
    const targets = p.targets ?? [];
    assert.ok(targets.length > 0, `${where}: has queries`);
    const refIds = targets.map((t) => t.refId);
    assert.equal(new Set(refIds).size, refIds.length, `${where}: unique refIds`);
    for (const t of targets) assert.ok(typeof t.expr === "string" && t.expr.trim() !== "", `${where}: expr`);
    const pds = (p as { datasource?: { uid?: unknown } }).datasource;
    assert.equal(pds?.uid, "${datasource}", `${where}: uses the datasource variable`);
  }
  // Every variable used in a query is defined.
  for (const { panel, expr } of dashboardExpressions(d.panels)) {
    for (const m of expr.matchAll(/\$\{?(\w+)/g)) {
      const v = m[1] ?? "";
      if (v.startsWith("__")) continue;
      assert.ok(varNames.includes(v), `${panel}: variable $${v} is defined`);
    }
  }
});

test("dashboard: promtool parses every query (rules file of the extracted expressions)", () => {
  const d = readDashboard();
  const exprs = dashboardExpressions(d.panels);
  const dir = mkdtempSync(path.join(os.tmpdir(), "farm-dash-"));
  try {
    const file = path.join(dir, "dashboard-exprs.yml");
    const rules = exprs.map((e, i) => `      - record: dash:expr:${i}\n        expr: ${JSON.stringify(substituteGrafanaVariables(e.expr))}`);
    writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join("\n")}\n`);
    const out = assertPromtoolOk(["check", "rules", file]);
    assert.match(out, new RegExp(`SUCCESS: ${exprs.length} rules found`));
    // The check itself catches a broken expression.
    writeFileSync(file, `groups:\n  - name: broken\n    rules:\n      - record: dash:expr:0\n        expr: "sum(rate(farm_episodes_total[5m])"\n`);
    const bad = promtool(["check", "rules", file]);
    assert.notEqual(bad.status, 0);
    assert.match(bad.out, /parse error/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("dashboard: only farm metric names and labels that exist in @farm/metrics", async () => {
  const info = await farmSeriesInfo();
  const d = readDashboard();
  const used = new Set<string>();
  for (const { panel, refId, expr } of dashboardExpressions(d.panels)) {
    const where = `${panel} [${refId}]`;
    const names = selectedNames(substituteGrafanaVariables(expr));
    assert.ok(names.length > 0, `${where}: selects something`);
    for (const n of names) {
      if (n === "up") continue;
      assert.ok(info.seriesNames.has(n), `${where}: '${n}' is not a series of libs/metrics METRIC`);
      used.add(n.replace(/_(bucket|sum|count)$/, ""));
    }
    for (const [series, labels] of selectorLabels(expr)) {
      const known = info.labelsOf(series);
      if (!known) continue;
      for (const l of labels) assert.ok(known.has(l), `${where}: ${series} has no label '${l}'`);
    }
    const any = new Set<string>(COMMON_LABELS);
    for (const n of names) for (const l of info.labelsOf(n) ?? []) any.add(l);
    for (const l of groupingLabels(expr)) assert.ok(any.has(l), `${where}: grouping label '${l}' is on none of ${names.join(", ")}`);
  }
  // The brief's panels: throughput, outcomes, step latency, reward, devices, adb errors, queue, trajectory bytes.
  for (const m of ["farm_episodes_total", "farm_steps_total", "farm_step_phase_duration_seconds", "farm_episode_reward", "farm_devices", "farm_adb_errors_total", "farm_queue_jobs", "farm_trajectory_bytes_total"]) {
    assert.ok(used.has(m), `the dashboard shows ${m}`);
  }
});
