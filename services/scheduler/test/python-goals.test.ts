/**
 * The Python campaign client's goals (clients/python, Debian's /usr/bin/python3) against a real scheduler: `submit
 * --goals FILE.jsonl --a11y-every 1` puts goals[i mod N] and their game configs on the jobs; the scheduler's refusal of
 * a bad goal reaches Python as FarmApiError naming the field; a bad file line is named before anything is sent.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { episodeJobId } from "@farm/queue";
import { useSchedulerService } from "./helpers.ts";

const run = promisify(execFile);
const PYTHON = "/usr/bin/python3";
const CLIENT_DIR = path.resolve(import.meta.dirname, "../../../clients/python");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "py-goals-"));
const service = useSchedulerService();
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs python3 in the client's folder; resolves with the exit code and output (never throws on a non-zero exit). */
async function py(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(PYTHON, args, { cwd: CLIENT_DIR, timeout: 60_000 });
    return { code: 0, ...r };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === "number" ? x.code : -1, stdout: x.stdout ?? "", stderr: x.stderr ?? "" };
  }
}

test("python3 -m farm_client submit --goals: each job carries goals[i mod N] and its game config", async () => {
  const goals = path.join(dir, "goals.jsonl");
  fs.writeFileSync(goals, `{"goal": "Create a note titled eggs", "game_config": {"title": "eggs"}}\n{"goal": "Look around"}\n`);
  const r = await py(["-m", "farm_client", "--url", service.running.http.url, "submit", "todo_create_note", "--episodes", "3", "--goals", goals, "--a11y-every", "1"]);
  assert.equal(r.code, 0, r.stderr);
  const { campaign } = JSON.parse(r.stdout) as { campaign: { id: string; goals: number } };
  assert.equal(campaign.goals, 2);
  const jobs = await Promise.all([0, 1, 2].map((i) => service.running.scheduler.queue.getJob(episodeJobId(campaign.id, i))));
  assert.deepEqual(
    jobs.map((j) => [j?.data.goal, j?.data.gameConfig, j?.data.options.a11yEvery]),
    [
      ["Create a note titled eggs", { title: "eggs" }, 1],
      ["Look around", undefined, 1],
      ["Create a note titled eggs", { title: "eggs" }, 1],
    ],
  );
});

test("a goal the scheduler refuses reaches Python as FarmApiError naming the field", async () => {
  const script = `
import sys
from farm_client import CampaignClient, FarmApiError
try:
    CampaignClient(sys.argv[1]).submit("todo_create_note", 2, goals=["fine", "x" * 2001])
except FarmApiError as e:
    print(e.status, e.code, e.message)
`;
  const r = await py(["-c", script, service.running.http.url]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^400 SPEC_INVALID invalid campaign: goals\.1\.goal: at most 2000 characters/);
});

test("a bad goals file line is named (file:line, field) and nothing is submitted", async () => {
  const bad = path.join(dir, "bad.jsonl");
  fs.writeFileSync(bad, `{"goal": "fine"}\n{"goal": "x", "game_config": [1]}\n`);
  const before = (await service.running.scheduler.list()).length;
  const r = await py(["-m", "farm_client", "--url", service.running.http.url, "submit", "todo_create_note", "--episodes", "2", "--goals", bad]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^farm_client: .*bad\.jsonl:2: field game_config: must be a JSON object/);
  assert.equal((await service.running.scheduler.list()).length, before);
});

test("a task family's goals from Python: params fix each episode's parameters, the goal may be left out", async () => {
  const script = `
import json, sys
from farm_client import CampaignClient, FarmApiError
c = CampaignClient(sys.argv[1])
r = c.submit("example_wifi", 3, goals=[{"params": {"state": "off"}}, {"goal": "Wi-Fi on", "params": {"state": "on"}}])
print(r["campaign"]["id"])
try:
    c.submit("example_wifi", 1, goals=[{"params": {"state": "maybe"}}])
except FarmApiError as e:
    print(e.status, e.code, e.message)
`;
  const r = await py(["-c", script, service.running.http.url]);
  assert.equal(r.code, 0, r.stderr);
  const [id, refusal] = r.stdout.trim().split("\n");
  const jobs = await Promise.all([0, 1, 2].map((i) => service.running.scheduler.queue.getJob(episodeJobId(id!, i))));
  assert.deepEqual(jobs.map((j) => [j?.data.goal, j?.data.params]), [[undefined, { state: "off" }], ["Wi-Fi on", { state: "on" }], [undefined, { state: "off" }]]);
  assert.match(refusal!, /^400 SPEC_INVALID invalid campaign: goals\.0\.params: state: must be one of "on", "off"/);
});
