/**
 * The worker's policy resolver against hostile job policies: names that try to leave the policy folder,
 * special files, remote URLs aimed at metadata addresses or outside the allow-list, credentials in
 * URLs. Each is refused as unrecoverable (POLICY_UNKNOWN / POLICY_INVALID) with a printable message
 * that never carries the credentials; allowed ones resolve.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { UnrecoverableError } from "bullmq";
import { failureCodeOf } from "@farm/queue";
import { policyForJob, shownSpec } from "../src/policy-resolver.ts";
import { resolveWorkerConfig } from "../src/config.ts";

test("hostile policy specs are refused without retries; messages are clean", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "policies-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, "ok.json"), JSON.stringify([{ actionType: "LIFT" }]));
  mkdirSync(path.join(dir, "sub"));
  execFileSync("mkfifo", [path.join(dir, "fifo.json")]);
  const cases: [string, string][] = [
    ["scripted:../../etc/passwd", "POLICY_UNKNOWN"],
    ["scripted:/etc/passwd", "POLICY_UNKNOWN"],
    ["module:sub/../../x.ts", "POLICY_UNKNOWN"],
    ["scripted:.hidden", "POLICY_UNKNOWN"],
    ["scripted:sub", "POLICY_UNKNOWN"],
    ["scripted:fifo.json", "POLICY_UNKNOWN"],
    ["scripted:missing.json", "POLICY_UNKNOWN"],
    ["scripted:a\\b", "POLICY_UNKNOWN"],
    ["http:http://169.254.169.254/latest/meta-data/", "POLICY_INVALID"],
    ["http:http://metadata.google.internal/computeMetadata/v1/", "POLICY_INVALID"],
    ["http:http://[fe80::1]/act", "POLICY_INVALID"],
    ["http:http://user:hunter2@evil.example/act?token=s3cr3t", "POLICY_INVALID"],
    ["http:https://10.0.0.1/act", "POLICY_INVALID"],
  ];
  for (const [spec, code] of cases) {
    await assert.rejects(policyForJob({ spec }, dir), (e: unknown) => {
      assert.ok(e instanceof UnrecoverableError, `${spec}: ${String(e)}`);
      assert.equal(failureCodeOf(e.message), code, `${spec}: ${e.message}`);
      assert.doesNotMatch(e.message, /hunter2|s3cr3t/);
      assert.doesNotMatch(e.message, /[\u0000-\u001f]/);
      return true;
    });
  }
  // Allowed: a plain file in the folder, loopback, and listed hosts.
  await (await policyForJob({ spec: "scripted:ok.json" }, dir)).close();
  await (await policyForJob({ spec: "http:http://127.0.0.1:9/act" }, dir)).close();
  await (await policyForJob({ spec: "http:https://10.0.0.1/act" }, dir, ["10.0.0.0/8"])).close();
  await assert.rejects(policyForJob({ spec: "http:http://169.254.169.254/" }, dir, ["*"]), /metadata/);
  console.log(`hostile policy specs (worker): ${cases.length + 4} cases`);
});

test("specs shown in messages carry no credentials; the allow-list is checked at start-up", () => {
  assert.equal(shownSpec("http:http://u:pw@h/act?token=x"), "http:http://***@h/act?token=***");
  assert.equal(shownSpec("scripted:a.json"), "scripted:a.json");
  assert.deepEqual(resolveWorkerConfig({}, { FARM_POLICY_ALLOWED_HOSTS: "models.example, 10.0.0.0/8" }).policyAllowedHosts, ["models.example", "10.0.0.0/8"]);
  assert.throws(() => resolveWorkerConfig({}, { FARM_POLICY_ALLOWED_HOSTS: "http://nope" }), /policyAllowedHosts \(FARM_POLICY_ALLOWED_HOSTS\) item 'http:\/\/nope' is not a host name/);
});
