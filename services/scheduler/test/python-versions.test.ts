/**
 * Policy versions from Python (issue 38; clients/python, Debian's /usr/bin/python3) against a real scheduler:
 * `submit(..., max_staleness=, on_stale=)` puts the staleness option on the jobs, `raise_version` raises the
 * campaign's current version (a whole number as its text), `policy_version` reads it, a version that would go back
 * is FarmApiError 409 VERSION_CONFLICT, and an unknown campaign 404; `python3 -m farm_client set-version` does the same.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { episodeJobId } from "@farm/queue";
import { useSchedulerService } from "./helpers.ts";

const run = promisify(execFile);
const CLIENT_DIR = path.resolve(import.meta.dirname, "../../../clients/python");
const service = useSchedulerService();

async function py(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    return { code: 0, ...(await run("/usr/bin/python3", args, { cwd: CLIENT_DIR, timeout: 60_000 })) };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === "number" ? x.code : -1, stdout: x.stdout ?? "", stderr: x.stderr ?? "" };
  }
}

test("submit with max_staleness, raise_version and policy_version; going back is 409; the CLI's set-version", async () => {
  const script = `
import json, sys
from farm_client import CampaignClient, FarmApiError
c = CampaignClient(sys.argv[1])
r = c.submit("todo_create_note", 2, max_staleness=2, on_stale="end", campaign_id="pyv")
out = {"id": r["campaign"]["id"], "before": c.policy_version("pyv")}
out["first"] = c.raise_version("pyv", 4)
out["again"] = c.raise_version("pyv", "4")
out["next"] = c.raise_version("pyv", "7")
for bad in ("5", "4"):
    try:
        c.raise_version("pyv", bad)
    except FarmApiError as e:
        out["refused_" + bad] = [e.status, e.code]
try:
    c.raise_version("nope", "1")
except FarmApiError as e:
    out["unknown"] = [e.status, e.code]
try:
    c.submit("todo_create_note", 1, on_stale="end")
except ValueError as e:
    out["alone"] = str(e)
out["now"] = c.policy_version("pyv")
print(json.dumps(out))
`;
  const url = service.running.http.url;
  const r = await py(["-c", script, url]);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.before, null);
  assert.deepEqual(out.first, { campaignId: "pyv", version: "4", raised: true, versions: 1 });
  assert.deepEqual(out.again, { campaignId: "pyv", version: "4", raised: false, versions: 1 });
  assert.deepEqual(out.next, { campaignId: "pyv", version: "7", previous: "4", raised: true, versions: 2 });
  assert.deepEqual([out.refused_5, out.refused_4, out.unknown], [[409, "VERSION_CONFLICT"], [409, "VERSION_CONFLICT"], [404, "CAMPAIGN_NOT_FOUND"]]);
  assert.equal(out.alone, "on_stale goes with max_staleness");
  assert.equal(out.now, "7");
  const job = await service.running.scheduler.queue.getJob(episodeJobId("pyv", 0));
  assert.deepEqual(job?.data.options.staleness, { maxVersions: 2, onStale: "end" });

  const cli = await py(["-m", "farm_client", "--url", url, "set-version", "pyv", "ckpt-8"]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.deepEqual(JSON.parse(cli.stdout), { campaignId: "pyv", previous: "7", raised: true, version: "ckpt-8", versions: 3 });
  const seen = await fetch(`${url}/campaigns/pyv/policy-version`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ version: "7" }) });
  assert.equal(seen.status, 409, "7 was raised before (the order is what non-numeric versions compare by)");
  assert.match(((await seen.json()) as { error: { message: string } }).error.message, /version "7" was raised before \(current: "ckpt-8"\)/);
  const bad = await fetch(`${url}/campaigns/pyv/policy-version`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ version: "a\u0007b" }) });
  assert.equal(bad.status, 400);
  assert.match(((await bad.json()) as { error: { message: string } }).error.message, /invalid policy version: version: no control characters/);
});
