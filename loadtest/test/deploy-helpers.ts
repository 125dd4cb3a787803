/**
 * Shared by the deploy-*.test.ts files: paths under deploy/, running promtool / prometheus (a missing
 * binary is a failure that points at deploy/bootstrap.sh, never a skip), a real Prometheus started on a
 * free port and queried through its HTTP API, PromQL name extraction, and
 * the metric names and label names the farm really exports (from @farm/metrics).
 */
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { createFarmMetrics, METRIC } from "@farm/metrics";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const DEPLOY = path.join(REPO, "deploy");
export const PROM_DIR = path.join(DEPLOY, "prometheus");
export const RULES_FILE = path.join(PROM_DIR, "rules", "farm-rules.yml");
export const DASHBOARD_FILE = path.join(DEPLOY, "grafana", "farm-dashboard.json");

const MISSING = "is not installed: run `bash deploy/bootstrap.sh` (installs the Debian package prometheus, which ships prometheus and promtool)";

/** Fails (does not skip) when the binary is missing. */
export function requireBinary(name: "promtool" | "prometheus"): void {
  const r = spawnSync(name, ["--version"], { encoding: "utf8" });
  if (r.error) assert.fail(`${name} ${MISSING} (${r.error.message})`);
  assert.equal(r.status, 0, `${name} --version exited ${r.status}: ${r.stderr}`);
}

export interface Run {
  status: number | null;
  out: string;
}

/** Runs promtool with args; stdout and stderr together (promtool splits its messages between them). */
export function promtool(args: string[], cwd = REPO): Run {
  requireBinary("promtool");
  const r = spawnSync("promtool", args, { cwd, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

export function assertPromtoolOk(args: string[], cwd = REPO): string {
  const r = promtool(args, cwd);
  assert.equal(r.status, 0, `promtool ${args.join(" ")} failed:\n${r.out}`);
  return r.out;
}

/** A free TCP port on 127.0.0.1 from the kernel's ephemeral range (never the farm's fixed ports). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = net.createServer();
      s.once("error", reject);
      s.listen(0, "127.0.0.1", () => {
        const a = s.address();
        s.close(() => resolve(typeof a === "object" && a ? a.port : 0));
      });
    });
    if (port !== 9090 && port !== 5037 && port !== 6379 && !(port >= 5554 && port <= 5585)) return port;
  }
}

// --- a real Prometheus -------------------------------------------------------------------------

/** One sample of an instant-vector answer. */
export interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface LocalPrometheus {
  /** `http://127.0.0.1:<port>` once started. */
  readonly base: string;
  /** Spawns `prometheus` with `configFile` on a free loopback port, its TSDB in `dataDir` (does not wait for it). */
  start(configFile: string, dataDir: string): Promise<void>;
  /** `data` of an HTTP API answer, which must have status "success". */
  api(pathAndQuery: string): Promise<unknown>;
  /** The samples of an instant query (the answer must be a vector). */
  query(q: string): Promise<PromSample[]>;
  /**
   * Polls `check` until it returns without throwing; fails with its last error (and Prometheus's log,
   * then `diagnostics()`) after `waitMs`, or at once when Prometheus exited.
   */
  eventually<T>(what: string, check: () => Promise<T>): Promise<T>;
  /** SIGTERM (SIGKILL after 5 s) and waits for the exit. */
  close(): Promise<void>;
}

export function localPrometheus(opts: { waitMs: number; diagnostics?: () => string }): LocalPrometheus {
  let child: ChildProcess | undefined;
  let log = "";
  let base = "";
  async function api(pathAndQuery: string): Promise<unknown> {
    const res = await fetch(`${base}${pathAndQuery}`);
    const body = (await res.json()) as { status: string; data?: unknown; error?: string };
    assert.equal(body.status, "success", `${pathAndQuery}: ${body.error ?? ""}`);
    return body.data;
  }
  return {
    get base() {
      return base;
    },
    async start(configFile, dataDir) {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      child = spawn(
        "prometheus",
        [`--config.file=${configFile}`, `--storage.tsdb.path=${dataDir}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      const keep = (b: Buffer) => (log = (log + b.toString()).slice(-20_000));
      child.stdout?.on("data", keep);
      child.stderr?.on("data", keep);
    },
    api,
    async query(q) {
      const data = (await api(`/api/v1/query?query=${encodeURIComponent(q)}`)) as { resultType: string; result: PromSample[] };
      assert.equal(data.resultType, "vector", q);
      return data.result;
    },
    async eventually(what, check) {
      const deadline = Date.now() + opts.waitMs;
      let last: unknown;
      for (;;) {
        try {
          return await check();
        } catch (e) {
          last = e;
        }
        if (child && child.exitCode !== null) assert.fail(`prometheus exited (${child.exitCode}) while waiting for ${what}:\n${log.slice(-3000)}`);
        if (Date.now() > deadline) {
          const more = opts.diagnostics ? `\n${opts.diagnostics()}` : "";
          assert.fail(`timed out waiting for ${what}: ${last instanceof Error ? last.message : String(last)}\n--- prometheus log (tail) ---\n${log.slice(-2000)}${more}`);
        }
        await sleep(250);
      }
    },
    async close() {
      const c = child;
      if (!c || c.exitCode !== null) return;
      const exited = new Promise((resolve) => c.once("exit", resolve));
      c.kill("SIGTERM");
      const t = setTimeout(() => c.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(t);
    },
  };
}

// --- PromQL ----------------------------------------------------------------------------------

/** Grafana's built-in interval variables and the dashboard's own variables, as promtool-parsable text. */
export function substituteGrafanaVariables(expr: string, interval = "5m"): string {
  return expr
    .replace(/\$__rate_interval|\$\{__rate_interval\}|\$__interval|\$\{__interval\}|\$__range|\$\{__range\}/g, interval)
    .replace(/\$\{(\w+)(?::\w+)?\}|\$(\w+)/g, ".*");
}

const STRING_LITERAL = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g;
// Words that are PromQL syntax, not series names.
const KEYWORDS = new Set([
  "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "offset", "bool", "inf", "nan",
]);

/**
 * Series names an expression selects (metric names and recording-rule names): identifiers not followed
 * by "(" (functions, aggregations) and not inside strings, braces or a by/without/on/ignoring list.
 */
export function selectedNames(expr: string): string[] {
  let s = expr.replace(STRING_LITERAL, '""');
  s = s.replace(/\{[^}]*\}/g, "{}");
  s = s.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  s = s.replace(/\[[^\]]*\]/g, "[]");
  const names = new Set<string>();
  for (const m of s.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const word = m[0];
    const rest = s.slice((m.index ?? 0) + word.length);
    if (/^\s*\(/.test(rest)) continue;
    if (KEYWORDS.has(word.toLowerCase())) continue;
    names.add(word);
  }
  return [...names];
}

/** `name{l1="…", l2=~"…"}` → [name, [l1, l2]] for every selector with braces. */
export function selectorLabels(expr: string): [string, string[]][] {
  const out: [string, string[]][] = [];
  for (const m of expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}/g)) {
    const inner = (m[2] ?? "").replace(STRING_LITERAL, '""');
    const labels = [...inner.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)/g)].map((x) => x[1] ?? "");
    out.push([m[1] ?? "", labels]);
  }
  return out;
}

/** Labels from by/without/on/ignoring clauses. */
export function groupingLabels(expr: string): string[] {
  const s = expr.replace(STRING_LITERAL, '""');
  const out: string[] = [];
  for (const m of s.matchAll(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g)) {
    for (const l of (m[1] ?? "").split(",")) if (l.trim()) out.push(l.trim());
  }
  return out;
}

// --- what the farm exports ---------------------------------------------------------------------

/** Labels every scraped farm series carries besides its own: `service` (set by @farm/metrics), `job` and `instance` (set by Prometheus). */
export const COMMON_LABELS = ["service", "job", "instance"] as const;

export interface FarmSeriesInfo {
  /** Base metric name → its type and label names (without the common ones). */
  metrics: Map<string, { type: string; labels: string[] }>;
  /** Every series name a scrape of a farm process can hold (histograms expanded to _bucket/_sum/_count). */
  seriesNames: Set<string>;
  /** Series name → labels it can carry (own + common, + le for _bucket). */
  labelsOf(series: string): Set<string> | undefined;
}

export async function farmSeriesInfo(): Promise<FarmSeriesInfo> {
  const m = createFarmMetrics({ service: "probe", collectDefault: false });
  const metrics = new Map<string, { type: string; labels: string[] }>();
  for (const name of Object.values(METRIC)) {
    const metric = m.registry.getSingleMetric(name) as unknown as { labelNames?: string[] } | undefined;
    assert.ok(metric, `${name} from METRIC is registered`);
    const json = (await m.registry.getMetricsAsJSON()).find((x) => x.name === name);
    metrics.set(name, { type: String(json?.type), labels: [...(metric.labelNames ?? [])] });
  }
  const seriesNames = new Set<string>();
  const labels = new Map<string, Set<string>>();
  for (const [name, info] of metrics) {
    const own = new Set([...info.labels, ...COMMON_LABELS]);
    if (info.type === "histogram") {
      seriesNames.add(`${name}_bucket`);
      labels.set(`${name}_bucket`, new Set([...own, "le"]));
      for (const suffix of ["_sum", "_count"]) {
        seriesNames.add(name + suffix);
        labels.set(name + suffix, own);
      }
    } else {
      seriesNames.add(name);
      labels.set(name, own);
    }
  }
  return { metrics, seriesNames, labelsOf: (s) => labels.get(s) };
}

/** The expression of the `expr:` line at `i` (inline, or the `|` / `>` block under it joined by spaces); undefined when line `i` is not one. */
function exprAt(lines: string[], i: number): string | undefined {
  const e = /^(\s*)expr:\s*(.*)$/.exec(lines[i] ?? "");
  if (!e) return undefined;
  const text = e[2] ?? "";
  if (text !== "|" && text !== ">") return text;
  const indent = (e[1] ?? "").length;
  const body: string[] = [];
  for (let j = i + 1; j < lines.length; j++) {
    const l = lines[j] ?? "";
    if (l.trim() !== "" && l.length - l.trimStart().length <= indent) break;
    body.push(l.trim());
  }
  return body.join(" ").trim();
}

/** Recording rules of farm-rules.yml: name → expression text (read by line; the file is our own plain YAML). */
export function recordingRules(file = RULES_FILE): Map<string, string> {
  const lines = readFileSync(file, "utf8").split("\n");
  const out = new Map<string, string>();
  for (let i = 0; i < lines.length; i++) {
    const rec = /^\s*- record:\s*(\S+)\s*$/.exec(lines[i] ?? "");
    if (!rec?.[1]) continue;
    const expr = exprAt(lines, i + 1);
    assert.ok(expr !== undefined, `line ${i + 2} of ${file}: expr after record ${rec[1]}`);
    out.set(rec[1], expr);
  }
  return out;
}

/** Every expr of the rule file (recording rules and alerts), one string each. */
export function ruleExpressions(file = RULES_FILE): { name: string; expr: string }[] {
  const lines = readFileSync(file, "utf8").split("\n");
  const out: { name: string; expr: string }[] = [];
  let name = "";
  for (let i = 0; i < lines.length; i++) {
    const head = /^\s*- (?:record|alert):\s*(\S+)/.exec(lines[i] ?? "");
    if (head?.[1]) name = head[1];
    const expr = exprAt(lines, i);
    if (expr !== undefined) out.push({ name, expr });
  }
  return out;
}

// --- the dashboard -----------------------------------------------------------------------------

export interface DashTarget {
  refId?: unknown;
  expr?: unknown;
  legendFormat?: unknown;
}
export interface DashPanel {
  id?: unknown;
  type?: unknown;
  title?: unknown;
  gridPos?: { x?: unknown; y?: unknown; w?: unknown; h?: unknown };
  targets?: DashTarget[];
  panels?: DashPanel[];
}

export function readDashboard(): Record<string, unknown> & { panels: DashPanel[] } {
  const text = readFileSync(DASHBOARD_FILE, "utf8");
  const d = JSON.parse(text) as unknown;
  assert.ok(d && typeof d === "object" && !Array.isArray(d), "the dashboard is a JSON object");
  const panels = (d as { panels?: unknown }).panels;
  assert.ok(Array.isArray(panels), "dashboard.panels is an array");
  return d as Record<string, unknown> & { panels: DashPanel[] };
}

/** Every panel, rows' nested panels included. */
export function allPanels(panels: DashPanel[]): DashPanel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}

/** [panel title, refId, expr] for every query of the dashboard. */
export function dashboardExpressions(panels: DashPanel[]): { panel: string; refId: string; expr: string }[] {
  return allPanels(panels).flatMap((p) =>
    (p.targets ?? []).map((t) => ({ panel: String(p.title), refId: String(t.refId), expr: String(t.expr) })),
  );
}
