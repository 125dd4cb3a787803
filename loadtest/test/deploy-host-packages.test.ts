/**
 * deploy/image/host-packages.sh: the host packages the image build and the compose e2e need are found by
 * the commands they provide, and a missing one is named. On a PATH without iptables (netavark's firewall
 * tool, the package a hand-prepared machine hid) the check names it; with an `iptables` on the PATH it does
 * not. compose-e2e.sh and build.sh stop at once on such a host when told not to install
 * (FARM_INSTALL_HOST_PACKAGES=0), before building anything. Nothing is installed here.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { DEPLOY } from "./deploy-helpers.ts";

const HOST_PACKAGES = path.join(DEPLOY, "image", "host-packages.sh");
/** What the checks look for, kept off the test PATH so they are missing whatever this machine has. */
const HIDDEN = new Set(["iptables", "podman", "podman-compose", "mmdebstrap", "buildah", "crun"]);
let tmp: string;
let bin: string;

/** A folder of symlinks to every command on the usual PATH (and node's), minus HIDDEN. */
function pathWithout(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const d of [path.dirname(process.execPath), "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]) {
    let names: string[];
    try {
      names = fs.readdirSync(d);
    } catch {
      continue;
    }
    for (const n of names) {
      if (HIDDEN.has(n) || fs.existsSync(path.join(dir, n))) continue;
      fs.symlinkSync(path.join(d, n), path.join(dir, n));
    }
  }
}

function sh(script: string, env: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync("/bin/bash", ["-c", script], { env, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "host-packages-"));
  bin = path.join(tmp, "bin");
  pathWithout(bin);
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

test("the deploy scripts parse (bash -n)", () => {
  for (const f of ["image/host-packages.sh", "image/build.sh", "image/podman-host.sh", "test/compose-e2e.sh"]) {
    const r = spawnSync("bash", ["-n", path.join(DEPLOY, f)], { encoding: "utf8" });
    assert.equal(r.status, 0, `${f}: ${r.stderr}`);
  }
});

test("without iptables on the PATH the check names it (and the rest of what podman needs); an iptables there satisfies it", () => {
  const env = { PATH: bin, HOME: tmp, FARM_INSTALL_HOST_PACKAGES: "0" };
  const missing = sh(`source '${HOST_PACKAGES}'; farm_missing_host_packages e2e podman podman-compose`, env);
  assert.equal(missing.status, 0, missing.stderr);
  const names = missing.stdout.trim().split("\n");
  for (const p of ["iptables", "podman", "podman-compose", "mmdebstrap", "buildah", "crun"]) assert.ok(names.includes(p), `${p} named in ${names.join(" ")}`);

  const ensure = sh(`source '${HOST_PACKAGES}'; farm_ensure_host_packages e2e podman podman-compose`, env);
  assert.equal(ensure.status, 1);
  assert.match(ensure.stderr, /missing on this host: .*\biptables\b/);
  assert.match(ensure.stderr, /apt-get install --no-install-recommends .*\biptables\b/, "says how to get them");

  fs.writeFileSync(path.join(bin, "iptables"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  try {
    const again = sh(`source '${HOST_PACKAGES}'; farm_missing_host_packages e2e podman podman-compose`, env);
    assert.ok(!again.stdout.split("\n").includes("iptables"), again.stdout);
    assert.ok(again.stdout.split("\n").includes("podman"), "still names the others");
  } finally {
    fs.rmSync(path.join(bin, "iptables"));
  }
  // Docker as the engine needs none of podman's packages; the image build needs no curl or podman-compose.
  const docker = sh(`source '${HOST_PACKAGES}'; farm_missing_host_packages build docker`, env).stdout.trim().split("\n");
  assert.deepEqual(docker.filter((p) => HIDDEN.has(p)), ["mmdebstrap"]);
});

test("compose-e2e.sh and build.sh stop at once, naming iptables, on a host without it (no install allowed)", () => {
  const env = { PATH: bin, HOME: tmp, FARM_INSTALL_HOST_PACKAGES: "0", FARM_IMAGE_WORK: path.join(tmp, "work") };
  for (const script of ["test/compose-e2e.sh", "image/build.sh"]) {
    const r = spawnSync("/bin/bash", [path.join(DEPLOY, script)], { env, encoding: "utf8", timeout: 60_000 });
    assert.equal(r.status, 1, `${script}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /missing on this host: .*\biptables\b/, script);
    assert.doesNotMatch(r.stderr, /building the image|mmdebstrap bookworm|podman-host\.sh: CONTAINERS_CONF/, `${script} stopped before doing anything`);
  }
  assert.ok(!fs.existsSync(path.join(tmp, "work")), "nothing was written");
});
