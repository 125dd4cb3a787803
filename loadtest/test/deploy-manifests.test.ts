/**
 * deploy/compose and deploy/k8s cannot run here (no container engine), so they are checked against the
 * code they start: every `farm` subcommand they run exists in `farm --help`, every flag they pass is in
 * that subcommand's --help, every environment variable they set for a service is read by that
 * service's code (services/<name>/src or the libraries), and the settings a remote deployment needs
 * are there (non-loopback binds, token, metrics address, adb address). The k8s Prometheus config is
 * checked by promtool with its Kubernetes discovery swapped for static targets (Debian's Prometheus
 * build has no Kubernetes discovery).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { assertPromtoolOk, DEPLOY, PROM_DIR, REPO } from "./deploy-helpers.ts";

const FARM = path.join(REPO, "services", "cli", "bin", "farm.js");

const helpCache = new Map<string, string>();
function help(sub?: string): string {
  const key = sub ?? "";
  let h = helpCache.get(key);
  if (h === undefined) {
    h = execFileSync(process.execPath, [FARM, ...(sub ? [sub] : []), "--help"], { cwd: REPO, encoding: "utf8", timeout: 60_000 });
    helpCache.set(key, h);
  }
  return h;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => path.join(e.parentPath, e.name));
}

/** The source a subcommand's process runs: its service and every library (not the CLI wrapper's comments). */
function codeOf(service: string): string {
  const dirs = [path.join(REPO, "services", service, "src"), ...readdirSync(path.join(REPO, "libs")).map((l) => path.join(REPO, "libs", l, "src"))];
  return dirs.flatMap((d) => tsFiles(d)).map((f) => readFileSync(f, "utf8")).join("\n");
}

interface Launch {
  where: string;
  /** The farm subcommand and the arguments after it. */
  sub: string;
  args: string[];
  /** Environment variables set for the process. */
  env: Map<string, string>;
  /** Variables referenced as $(NAME) in the command (Kubernetes expansion). */
  expanded: Set<string>;
}

const unquote = (s: string) => s.trim().replace(/^["']|["']$/g, "");

/** `["node", "services/cli/bin/farm.js", "worker", "--name", "x"]` (flow sequence) → ["worker", "--name", "x"]. */
function farmArgs(commandLine: string): string[] | undefined {
  const m = /\[(.*)\]/.exec(commandLine);
  if (!m?.[1]) return undefined;
  const items = m[1].split(",").map(unquote);
  const i = items.indexOf("services/cli/bin/farm.js");
  return i >= 0 ? items.slice(i + 1) : undefined;
}

/** Services of the compose file that run farm.js (block under `services:`, two-space indented names). */
function composeLaunches(): Launch[] {
  const file = path.join(DEPLOY, "compose", "docker-compose.yml");
  const lines = readFileSync(file, "utf8").split("\n");
  const start = lines.findIndex((l) => /^services:\s*$/.test(l));
  assert.ok(start >= 0, "compose: services:");
  const out: Launch[] = [];
  let current: { name: string; body: string[] } | undefined;
  const flush = () => {
    if (!current) return;
    const cmd = current.body.find((l) => /^\s{4}command:\s*\[/.test(l));
    const shell = current.body.join("\n");
    const env = new Map<string, string>();
    let inEnv = false;
    for (const l of current.body) {
      if (/^\s{4}environment:\s*$/.test(l)) {
        inEnv = true;
        continue;
      }
      if (inEnv && /^\s{6}[A-Z_][A-Z0-9_]*:/.test(l)) {
        const [k, ...v] = l.trim().split(":");
        env.set(k ?? "", unquote(v.join(":").replace(/\s+#.*$/, "")));
      } else if (inEnv && /^\s{0,4}\S/.test(l)) inEnv = false;
    }
    const args = cmd ? farmArgs(cmd) : /farm\.js\s+(\w+)([^\n]*)/.exec(shell)?.slice(1).join(" ").trim().split(/\s+/);
    if (args?.[0]) out.push({ where: `compose service ${current.name}`, sub: args[0], args: args.slice(1), env, expanded: new Set() });
  };
  for (const l of lines.slice(start + 1)) {
    if (/^\S/.test(l)) break;
    const svc = /^ {2}([a-z0-9-]+):\s*$/.exec(l);
    if (svc?.[1]) {
      flush();
      current = { name: svc[1], body: [] };
    } else current?.body.push(l);
  }
  flush();
  return out;
}

/** Containers of the k8s manifests that run farm.js. */
function k8sLaunches(): Launch[] {
  const dir = path.join(DEPLOY, "k8s");
  const out: Launch[] = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith(".yaml"))) {
    for (const doc of readFileSync(path.join(dir, f), "utf8").split(/^---\s*$/m)) {
      // The container that runs farm.js (init containers run other commands).
      const cmd = [...doc.matchAll(/^\s*command:\s*(\[.*\])\s*$/gm)].find((m) => farmArgs(m[1] ?? "") !== undefined);
      const args = cmd?.[1] ? farmArgs(cmd[1]) : undefined;
      if (!args?.[0]) continue;
      const env = new Map<string, string>();
      const lines = doc.split("\n");
      lines.forEach((l, i) => {
        const m = /^\s*- name:\s*([A-Z_][A-Z0-9_]*)\s*$/.exec(l);
        if (!m?.[1]) return;
        const next = lines[i + 1] ?? "";
        const value = /^\s*value:\s*(.*)$/.exec(next);
        env.set(m[1], value?.[1] !== undefined ? unquote(value[1]) : `<${next.trim()} ${(lines[i + 2] ?? "").trim()}>`);
      });
      // Variables only used through $(NAME) expansion, in the command or in other variables' values.
      const expanded = new Set([...[cmd?.[1] ?? "", ...env.values()].join("\n").matchAll(/\$\(([A-Z_][A-Z0-9_]*)\)/g)].map((m) => m[1] ?? ""));
      out.push({ where: `k8s ${f}`, sub: args[0], args: args.slice(1), env, expanded });
    }
  }
  return out;
}

const launches = [...composeLaunches(), ...k8sLaunches()];

test("compose and k8s start the scheduler and workers (and the compose sim) with the farm command", () => {
  const where = launches.map((l) => `${l.where}: ${l.sub}`);
  for (const w of ["compose service scheduler: scheduler", "compose service worker-1: worker", "compose service worker-2: worker", "compose service sim: sim", "k8s scheduler.yaml: scheduler", "k8s worker.yaml: worker"]) {
    assert.ok(where.includes(w), `${w} (found: ${where.join("; ")})`);
  }
});

test("every farm subcommand and flag they use exists in the CLI's --help", () => {
  const commands = new Set([...help().matchAll(/^ {2}(\w[\w-]*)\b/gm)].map((m) => m[1]));
  for (const l of launches) {
    assert.ok(commands.has(l.sub), `${l.where}: 'farm ${l.sub}' is a command (${[...commands].join(", ")})`);
    const flags = new Set([...help(l.sub).matchAll(/(--[a-z][a-z-]*)/g)].map((m) => m[1]));
    for (const a of l.args) {
      if (!a.startsWith("--")) continue;
      assert.ok(flags.has(a.split("=")[0]), `${l.where}: 'farm ${l.sub} ${a}' is a flag of 'farm ${l.sub} --help'`);
    }
  }
});

test("every environment variable set for a service is read by that service's code", () => {
  const code = new Map<string, string>();
  for (const l of launches) {
    if (!code.has(l.sub)) code.set(l.sub, l.sub === "sim" ? "" : codeOf(l.sub));
    for (const name of l.env.keys()) {
      if (l.expanded.has(name)) continue; // only used in the command line ($(NODE_NAME))
      assert.ok(new RegExp(`\\b${name}\\b`).test(code.get(l.sub) ?? ""), `${l.where}: ${name} is not read by services/${l.sub} or the libraries`);
    }
  }
});

test("remote-ready settings: non-loopback binds with a token, reachable metrics, adb address, Redis", () => {
  for (const l of launches) {
    const argOrEnv = (flag: string, env: string) => {
      const i = l.args.indexOf(flag);
      return i >= 0 ? l.args[i + 1] : l.env.get(env);
    };
    if (l.sub === "scheduler") {
      assert.equal(argOrEnv("--host", "FARM_SCHEDULER_HOST"), "0.0.0.0", `${l.where}: API reachable from other containers/pods`);
      assert.ok(l.env.has("FARM_API_TOKEN"), `${l.where}: a non-loopback scheduler needs FARM_API_TOKEN`);
      assert.ok(l.env.has("REDIS_URL"), `${l.where}: REDIS_URL`);
    }
    if (l.sub === "worker") {
      assert.equal(argOrEnv("--metrics-host", "FARM_METRICS_HOST"), "0.0.0.0", `${l.where}: /metrics reachable by Prometheus`);
      assert.equal(argOrEnv("--metrics-port", "FARM_METRICS_PORT"), "9465", `${l.where}: the port Prometheus scrapes`);
      assert.ok(l.env.has("FARM_ADB_HOST") && l.env.has("FARM_ADB_PORT"), `${l.where}: adb server address`);
      assert.ok(l.env.has("REDIS_URL"), `${l.where}: REDIS_URL`);
      assert.ok(l.env.has("FARM_OUT_DIR"), `${l.where}: trajectories on a volume`);
    }
  }
  // Prometheus annotations on the k8s pods match the ports the processes serve /metrics on.
  const sched = readFileSync(path.join(DEPLOY, "k8s", "scheduler.yaml"), "utf8");
  const worker = readFileSync(path.join(DEPLOY, "k8s", "worker.yaml"), "utf8");
  assert.match(sched, /prometheus\.io\/port: "8420"/);
  assert.match(sched, /containerPort: 8420/);
  assert.match(worker, /prometheus\.io\/port: "9465"/);
  assert.match(worker, /containerPort: 9465/);
  // The compose Prometheus scrapes the services by the names and ports they serve on.
  const promCompose = readFileSync(path.join(PROM_DIR, "prometheus-compose.yml"), "utf8");
  assert.match(promCompose, /targets: \[scheduler:8420\]/);
  assert.match(promCompose, /names: \[worker-1, worker-2\]/);
  // Dockerfile: the repo plus npm ci on the base deploy/image/build.sh makes (no registry image).
  const dockerfile = readFileSync(path.join(DEPLOY, "docker", "Dockerfile"), "utf8");
  assert.match(dockerfile, /^FROM \$\{FARM_BASE_IMAGE\}/m);
  assert.match(dockerfile, /npm ci/);
});

test("ConfigMap and Secret keys referenced by the k8s containers exist", () => {
  const dir = path.join(DEPLOY, "k8s");
  const keysOf = (file: string): Set<string> => {
    const text = readFileSync(path.join(dir, file), "utf8");
    const data = text.split(/^(?:data|stringData):\s*$/m)[1] ?? "";
    return new Set([...data.matchAll(/^ {2}([A-Z_][A-Z0-9_]*):/gm)].map((m) => m[1] ?? ""));
  };
  const cm = keysOf("configmap.yaml");
  const secret = keysOf("secret.example.yaml");
  for (const f of ["scheduler.yaml", "worker.yaml"]) {
    const text = readFileSync(path.join(dir, f), "utf8");
    for (const m of text.matchAll(/configMapKeyRef: \{name: farm-config, key: ([A-Z_]+)\}/g)) assert.ok(cm.has(m[1] ?? ""), `${f}: farm-config has ${m[1]}`);
    for (const m of text.matchAll(/secretKeyRef: \{name: farm-secrets, key: ([A-Z_]+)\}/g)) assert.ok(secret.has(m[1] ?? ""), `${f}: farm-secrets has ${m[1]}`);
  }
});

test("promtool check config: the k8s Prometheus config (Kubernetes discovery swapped for static targets)", () => {
  const src = readFileSync(path.join(PROM_DIR, "prometheus-k8s.yml"), "utf8");
  const swapped = src.replace(/^( {4})kubernetes_sd_configs:\n(?:\1 .*\n)+/m, '$1static_configs:\n$1  - targets: ["127.0.0.1:1"]\n');
  assert.notEqual(swapped, src, "the kubernetes_sd_configs block was found");
  const dir = mkdtempSync(path.join(os.tmpdir(), "farm-k8s-prom-"));
  try {
    const file = path.join(dir, "prometheus-k8s.yml");
    writeFileSync(file, swapped.replace("rules/farm-rules.yml", path.join(PROM_DIR, "rules", "farm-rules.yml")));
    assertPromtoolOk(["check", "config", file]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
