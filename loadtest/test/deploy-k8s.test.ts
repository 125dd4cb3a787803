/**
 * deploy/k8s checked offline against the Kubernetes API schemas (the npm package kubernetes-models:
 * one model per apiVersion/kind with its OpenAPI schema compiled to a validator), the worker's
 * trajectory volume writable by the non-root user the image runs as, and deploy/prometheus/alertmanager.yml
 * checked by `amtool check-config` (Debian's prometheus-alertmanager, installed by deploy/bootstrap.sh).
 * YAML is read with python3-yaml (also installed by bootstrap), the parser the other deploy checks use.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { DEPLOY, PROM_DIR } from "./deploy-helpers.ts";

type Doc = { apiVersion: string; kind: string; metadata?: { name?: string }; spec?: Record<string, unknown> } & Record<string, unknown>;
type Model = new (data: unknown) => { validate(): void };

const K8S = path.join(DEPLOY, "k8s");

/** Every document of a YAML file, as JSON (python3-yaml's safe loader). */
function yamlDocs(file: string): Doc[] {
  const out = execFileSync("python3", ["-c", "import json,sys,yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]))", file], { encoding: "utf8" });
  return JSON.parse(out) as Doc[];
}

const manifests = readdirSync(K8S)
  .filter((f) => f.endsWith(".yaml"))
  .flatMap((f) => yamlDocs(path.join(K8S, f)).map((doc, i) => ({ where: `${f} #${i + 1} (${doc.kind} ${doc.metadata?.name ?? "?"})`, doc })));

/** The kubernetes-models class of an apiVersion/kind (`apps/v1` → kubernetes-models/apps/v1, `v1` → kubernetes-models/v1). */
async function modelOf(apiVersion: string, kind: string): Promise<Model> {
  assert.match(apiVersion, /^([a-z0-9.-]+\/)?v[0-9]+((alpha|beta)[0-9]+)?$/, `apiVersion ${apiVersion}`);
  const mod = (await import(`kubernetes-models/${apiVersion}`)) as Record<string, unknown>;
  const model = Object.hasOwn(mod, kind) ? mod[kind] : undefined;
  assert.equal(typeof model, "function", `kubernetes-models has no ${kind} in ${apiVersion}`);
  return model as Model;
}

async function schemaProblem(doc: Doc): Promise<string | undefined> {
  const Model = await modelOf(doc.apiVersion, doc.kind);
  try {
    new Model(doc).validate();
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

test("every Kubernetes manifest validates against its API schema", async () => {
  assert.ok(manifests.length >= 8, `${manifests.length} documents`);
  for (const { where, doc } of manifests) {
    const problem = await schemaProblem(doc);
    assert.equal(problem, undefined, `${where}: ${problem}`);
  }
});

test("the schema check fails on broken manifests (wrong types, missing required fields, unknown kinds)", async () => {
  const worker = manifests.find((m) => m.doc.kind === "DaemonSet")!.doc;
  const broken = structuredClone(worker) as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } } & Doc;
  (broken.spec.template.spec.containers[0]!.ports as Record<string, unknown>[])[0]!.containerPort = "nine-four-six-five";
  assert.match((await schemaProblem(broken)) ?? "", /containerPort must be integer/);
  const nameless = structuredClone(worker) as typeof broken;
  delete nameless.spec.template.spec.containers[0]!.name;
  assert.match((await schemaProblem(nameless)) ?? "", /containers\/0 must have required property '?name'?/);
  await assert.rejects(modelOf("apps/v1", "Deploymnet"), /no Deploymnet in apps\/v1/);
});

test("the worker's trajectory volume is writable by the user the container runs as", () => {
  const ds = manifests.find((m) => m.doc.kind === "DaemonSet")!.doc;
  type Container = { name: string; command?: string[]; securityContext?: { runAsUser?: number }; volumeMounts?: { name: string; mountPath: string }[] };
  const pod = (ds.spec as { template: { spec: { securityContext?: { runAsUser?: number; runAsGroup?: number; fsGroup?: number; runAsNonRoot?: boolean }; containers: Container[]; initContainers?: Container[]; volumes: { name: string; hostPath?: { path: string }; emptyDir?: object; persistentVolumeClaim?: object }[] } } }).template.spec;
  const uid = pod.securityContext?.runAsUser;
  assert.ok(uid !== undefined && uid !== 0 && pod.securityContext?.runAsNonRoot, "the worker runs as a fixed non-root user");
  const worker = pod.containers.find((c) => c.name === "worker")!;
  for (const mount of worker.volumeMounts ?? []) {
    const volume = pod.volumes.find((v) => v.name === mount.name);
    assert.ok(volume, `volume ${mount.name}`);
    if (volume.hostPath) {
      // Kubernetes never chowns a hostPath (fsGroup does not apply): an init container must hand it over.
      const owner = (pod.initContainers ?? []).find((c) => c.volumeMounts?.some((m) => m.name === mount.name) && c.command?.[0] === "chown");
      assert.ok(owner, `hostPath ${volume.hostPath.path}: an init container chowns it`);
      assert.equal(owner.securityContext?.runAsUser, 0, "the chown runs as root");
      const target = owner.volumeMounts!.find((m) => m.name === mount.name)!.mountPath;
      assert.deepEqual(owner.command, ["chown", `${uid}:${pod.securityContext?.runAsGroup ?? uid}`, target]);
    } else {
      // emptyDir / persistent volumes are made group-writable for fsGroup by the kubelet.
      assert.equal(pod.securityContext?.fsGroup, pod.securityContext?.runAsGroup ?? uid, `${mount.name}: fsGroup matches the runtime group`);
    }
  }
});

function amtool(file: string): { status: number | null; out: string } {
  const r = spawnSync("amtool", ["check-config", file], { encoding: "utf8", timeout: 60_000 });
  if (r.error) assert.fail(`amtool is not installed: run \`bash deploy/bootstrap.sh\` (installs the Debian package prometheus-alertmanager) (${r.error.message})`);
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

test("the Alertmanager configuration passes amtool check-config, routes every severity the rules use, and a broken copy fails", () => {
  const file = path.join(PROM_DIR, "alertmanager.yml");
  const ok = amtool(file);
  assert.equal(ok.status, 0, ok.out);
  assert.match(ok.out, /SUCCESS/);
  // Every severity of deploy/prometheus/rules reaches a receiver on purpose (a route, or the default).
  const rules = readFileSync(path.join(PROM_DIR, "rules", "farm-rules.yml"), "utf8");
  const severities = new Set([...rules.matchAll(/severity:\s*(\w+)/g)].map((m) => m[1]!));
  const config = readFileSync(file, "utf8");
  for (const s of severities) assert.ok(s === "warning" || config.includes(`severity="${s}"`), `severity ${s} has a route (warning goes to the default receiver)`);

  const tmp = mkdtempSync(path.join(os.tmpdir(), "farm-amtool-"));
  try {
    const bad = path.join(tmp, "alertmanager.yml");
    writeFileSync(bad, config.replace("receiver: farm-pager", "receiver: no-such-receiver"));
    const r = amtool(bad);
    assert.notEqual(r.status, 0, "a route to an undefined receiver is refused");
    assert.match(r.out, /no-such-receiver/);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
