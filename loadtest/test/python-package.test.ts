/**
 * clients/python as a user installs it: its committed dm_env_rpc stubs are what the .proto files give
 * (tools/generate_stubs.py --check, and a changed file is named); a fresh virtual environment (Debian's
 * python3-venv, system site packages for Debian's grpcio and protobuf) takes `pip install
 * --no-build-isolation --no-index` of it with no network, `pip wheel` builds a wheel holding the stubs, and
 * examples/remote_env_random.py, copied to a folder outside the checkout, runs with the venv's python
 * against a local farm's remote environments (`--env-port`). Without the install it does not run there.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { startLocalWorkerFarm, type LocalWorkerFarm } from "@farm/local-farm";
import { createLogger } from "@farm/log";
import { PYTHON, PYTHON_CLIENT_DIR, REPO } from "../src/policy-farm.ts";

const run = promisify(execFile);
const GENERATOR = path.join(PYTHON_CLIENT_DIR, "tools/generate_stubs.py");
/** No pip cache, no version check, no user site: the venv and the folder given are all there is. */
const PIP_ENV = { ...withoutPythonPath(process.env), PIP_NO_CACHE_DIR: "1", PIP_DISABLE_PIP_VERSION_CHECK: "1", PYTHONNOUSERSITE: "1", PYTHONDONTWRITEBYTECODE: "1" };
let tmp: string;

function withoutPythonPath(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { PYTHONPATH: _ignored, ...rest } = env;
  return rest;
}
let farm: LocalWorkerFarm;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "farm-pip-"));
  farm = await startLocalWorkerFarm({
    devices: 2,
    taskPaths: [path.join(REPO, "tasks/classic_2048.textproto")],
    outDir: path.join(tmp, "out"),
    queuePrefix: "{pip}",
    logger: createLogger({ service: "python-package-test", level: "warn" }),
    worker: { episode: { settleMs: 20 }, envPort: 0 },
    bindTimeoutMs: 180_000,
  });
});

after(async () => {
  await farm?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test("the committed farm_remote/proto stubs are what tools/generate_stubs.py makes of the .proto files", async () => {
  const { stdout } = await run(PYTHON, [GENERATOR, "--check"], { timeout: 60_000 });
  assert.match(stdout, /4 files match/);
  // A stub that drifted from the .proto is named.
  const copy = path.join(tmp, "proto-copy");
  fs.cpSync(path.join(PYTHON_CLIENT_DIR, "farm_remote/proto"), copy, { recursive: true });
  fs.appendFileSync(path.join(copy, "status_pb2.py"), "# edited by hand\n");
  await assert.rejects(run(PYTHON, [GENERATOR, "--check", "--out", copy], { timeout: 60_000 }), (e: { code?: number; stderr?: string }) => {
    assert.equal(e.code, 1);
    assert.match(e.stderr ?? "", /differ \['status_pb2\.py'\]/);
    return true;
  });
});

test("pip installs clients/python into a fresh venv offline; the remote-env example runs from another folder", async () => {
  // A copy of the package folder: the build writes build/ and *.egg-info next to pyproject.toml.
  const src = path.join(tmp, "src");
  fs.cpSync(PYTHON_CLIENT_DIR, src, { recursive: true, filter: (p) => !/(^|\/)(build|dist|__pycache__|[^/]*\.egg-info)$/.test(p) });
  const venv = path.join(tmp, "venv");
  await run(PYTHON, ["-m", "venv", "--system-site-packages", venv], { timeout: 120_000 });
  const py = path.join(venv, "bin/python");
  await run(py, ["-m", "pip", "install", "--no-build-isolation", "--no-index", src], { env: PIP_ENV, timeout: 240_000 });

  const wheels = path.join(tmp, "wheels");
  await run(py, ["-m", "pip", "wheel", "--no-build-isolation", "--no-index", "--no-deps", "-w", wheels, src], { env: PIP_ENV, timeout: 240_000 });
  const wheel = fs.readdirSync(wheels).find((f) => f.endsWith(".whl"));
  assert.ok(wheel, "pip wheel wrote a wheel");
  const { stdout: listing } = await run(py, ["-m", "zipfile", "-l", path.join(wheels, wheel)], { timeout: 60_000 });
  for (const f of ["farm_client/policy_server.py", "farm_remote/world.py", "farm_remote/proto/dm_env_rpc_pb2.py", "farm_remote/proto/dm_env_rpc_pb2_grpc.py", "farm_remote/proto/status_pb2.py"]) {
    assert.ok(listing.includes(f), `the wheel holds ${f}`);
  }
  const { stdout: meta } = await run(py, ["-c", "import importlib.metadata as m; print(m.requires('farm-client'))"], { env: PIP_ENV, timeout: 60_000 });
  assert.match(meta, /grpcio/);
  assert.match(meta, /protobuf/);

  // The example alone in a folder outside the checkout, run by the venv's python.
  const elsewhere = path.join(tmp, "elsewhere", "examples");
  fs.mkdirSync(elsewhere, { recursive: true });
  const example = path.join(elsewhere, "remote_env_random.py");
  fs.copyFileSync(path.join(PYTHON_CLIENT_DIR, "examples/remote_env_random.py"), example);
  const { stdout: where } = await run(py, ["-c", "import farm_remote; print(farm_remote.__file__)"], { cwd: elsewhere, env: PIP_ENV, timeout: 60_000 });
  assert.ok(where.trim().startsWith(venv), `farm_remote comes from the venv, not the checkout: ${where}`);

  const args = [example, "--target", farm.worker.envAddress!, "--task", "classic_2048", "--steps", "20", "--worlds", "2", "--max-episode-steps", "10", "--seed", "3"];
  const r = await run(py, args, { cwd: elsewhere, env: PIP_ENV, timeout: 240_000 });
  const lines = r.stdout.trim().split("\n");
  assert.match(lines[lines.length - 1]!, /^worlds=2 steps=40 reward=\d+(\.\d+)?$/, `${r.stdout}\n${r.stderr}`);

  // The same copy without the install (Debian's python3, no farm_remote on its path) says what to do.
  await assert.rejects(run(PYTHON, args, { cwd: elsewhere, env: PIP_ENV, timeout: 60_000 }), (e: { stderr?: string }) => {
    assert.match(e.stderr ?? "", /pip install \.\/clients\/python/);
    return true;
  });
});
