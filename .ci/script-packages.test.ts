/**
 * Every script the root README names works from a fresh clone: one that runs the farm's TypeScript installs the
 * workspace's npm packages first (deploy/npm-packages.sh, or deploy/bootstrap.sh / `npm test`, which run it), or
 * stops at once naming `npm ci`; the few that need none say why below. A script added to the README without
 * either fails here.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { withTree } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Scripts the README names that need no npm package on the host, and why. */
const NO_NPM = new Map<string, string>([
  ["deploy/image/build.sh", "the image build: `npm ci` runs inside the image (deploy/docker/Dockerfile); the host's node only reports its version"],
  ["clients/python/tools/generate_stubs.py", "Python: protoc and grpc_python_plugin (Debian packages)"],
  ["clients/python/examples/remote_env_random.py", "Python: the farm_remote client, inside clients/python"],
]);

/** What a script does about the npm packages, read from its text (following `exec node FILE` of a wrapper). */
function npmHandling(rel: string): string | undefined {
  const text = fs.readFileSync(path.join(REPO, rel), "utf8");
  if (/^\s*farm_npm_packages\b/m.test(text)) return "installs (deploy/npm-packages.sh)";
  if (/^\s*(?:bash\s+)?deploy\/bootstrap\.sh\b|^\s*bash deploy\/bootstrap\.sh/m.test(text) || /^\s*npm test\b/m.test(text)) return "runs deploy/bootstrap.sh";
  if (/ERR_MODULE_NOT_FOUND/.test(text) && /npm ci/.test(text)) return "stops naming npm ci";
  const wrapped = /^exec node "\$here\/([^"]+)"/m.exec(text)?.[1];
  if (wrapped) return npmHandling(path.relative(REPO, path.resolve(path.dirname(path.join(REPO, rel)), wrapped)));
  return undefined;
}

/** The scripts the README names: paths of files that end in .sh or .py, or are executable (`.ci/run`, `…/emulator`). */
function readmeScripts(): string[] {
  const readme = fs.readFileSync(path.join(REPO, "README.md"), "utf8");
  const paths = [...readme.matchAll(/(?<![\w/.-])((?:deploy|\.ci|libs|services|loadtest|clients)(?:\/[\w.-]+)+)/g)].map((m) => m[1]!.replace(/\.$/, ""));
  const isScript = (rel: string): boolean => {
    if (/\.(?:sh|py)$/.test(rel)) return true;
    const stat = fs.statSync(path.join(REPO, rel), { throwIfNoEntry: false });
    return stat !== undefined && stat.isFile() && (stat.mode & 0o111) !== 0;
  };
  return [...new Set(paths)].filter(isScript).sort();
}

test("every script the README names installs the npm packages it needs, stops naming npm ci, or needs none", () => {
  const scripts = readmeScripts();
  for (const must of ["deploy/bootstrap.sh", "deploy/image/build.sh", "deploy/test/compose-e2e.sh", ".ci/run", ".ci/path-clone.sh", ".ci/stress-suite.sh", "libs/simulator/sdk/emulator/emulator"]) {
    assert.ok(scripts.includes(must), `the README names ${must} (the scan found: ${scripts.join(", ")})`);
  }
  const unhandled = scripts.filter((rel) => fs.existsSync(path.join(REPO, rel)) && !NO_NPM.has(rel) && npmHandling(rel) === undefined);
  assert.deepEqual(unhandled, [], "source deploy/npm-packages.sh and call farm_npm_packages (or list the script in NO_NPM with the reason)");
  const missing = scripts.filter((rel) => !fs.existsSync(path.join(REPO, rel)));
  assert.deepEqual(missing, [], "the README names scripts that do not exist");
  // `npm run demo` and `npm test` run bootstrap first.
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as { scripts: Record<string, string> };
  assert.match(pkg.scripts["predemo"] ?? "", /deploy\/bootstrap\.sh/);
  assert.match(pkg.scripts["pretest"] ?? "", /deploy\/bootstrap\.sh/);
});

test("the compose e2e installs the npm packages before it builds or submits anything", () => {
  const text = fs.readFileSync(path.join(REPO, "deploy/test/compose-e2e.sh"), "utf8");
  const install = text.search(/^farm_npm_packages /m);
  assert.ok(install > 0, "compose-e2e.sh calls farm_npm_packages");
  assert.ok(install < text.indexOf('bash "$repo_root/deploy/image/build.sh"') && install < text.indexOf("farm submit"));
});

/** Runs farm_npm_packages on `root` with an `npm` on PATH that only records its arguments. */
function runNpmPackages(root: string, env: Record<string, string> = {}): { status: number | null; stderr: string; npmCalls: string } {
  const bin = path.join(root, ".fake-bin");
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, "npm"), `#!/bin/sh\necho "$PWD: npm $*" >> '${path.join(root, "npm-calls")}'\n`, { mode: 0o755 });
  const r = spawnSync("bash", ["-c", 'source "$1"; farm_npm_packages "$2"', "sh", path.join(REPO, "deploy/npm-packages.sh"), root], {
    encoding: "utf8",
    env: { ...process.env, PATH: `${bin}:${process.env["PATH"] ?? ""}`, FARM_INSTALL_NPM_PACKAGES: "1", ...env },
  });
  const calls = path.join(root, "npm-calls");
  return { status: r.status, stderr: r.stderr, npmCalls: fs.existsSync(calls) ? fs.readFileSync(calls, "utf8") : "" };
}

test("farm_npm_packages: npm ci on a fresh clone, nothing when installed, a named command when told not to install", () => {
  withTree("npm-packages-", { "package-lock.json": "{}\n" }, (root) => {
    const fresh = runNpmPackages(root);
    assert.equal(fresh.status, 0, fresh.stderr);
    assert.match(fresh.npmCalls, /: npm ci --no-audit --no-fund/);
    assert.equal(fresh.npmCalls.split(": npm")[0], root, "npm ci runs in the checkout");

    const refused = runNpmPackages(root, { FARM_INSTALL_NPM_PACKAGES: "0" });
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /run: \(cd '.*' && npm ci\)/);

    fs.mkdirSync(path.join(root, "node_modules"));
    fs.writeFileSync(path.join(root, "node_modules/.package-lock.json"), "{}\n");
    fs.rmSync(path.join(root, "npm-calls"));
    const installed = runNpmPackages(root, { FARM_INSTALL_NPM_PACKAGES: "0" });
    assert.equal(installed.status, 0, installed.stderr);
    assert.equal(installed.npmCalls, "");
  });
});

test("the farm and emulator commands without node_modules stop at once naming npm ci", () => {
  const files = {
    "services/cli/bin/farm.js": fs.readFileSync(path.join(REPO, "services/cli/bin/farm.js"), "utf8"),
    "libs/simulator/bin/emulator.js": fs.readFileSync(path.join(REPO, "libs/simulator/bin/emulator.js"), "utf8"),
  };
  withTree("fresh-clone-", files, (root) => {
    for (const [rel, name] of [["services/cli/bin/farm.js", "farm"], ["libs/simulator/bin/emulator.js", "emulator"]] as const) {
      const r = spawnSync(process.execPath, [path.join(root, rel), "--version"], { encoding: "utf8", cwd: root });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`^${name}: the farm's npm packages are not installed .*npm ci`));
      assert.ok(r.stderr.includes(root), r.stderr);
      assert.doesNotMatch(r.stderr, /ERR_MODULE_NOT_FOUND|at async/);
    }
  });
});
