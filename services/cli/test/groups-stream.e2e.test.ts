/**
 * GRPO-style groups and the committed-episodes stream (issue 38) on a local farm of 3 devices:
 * `farm submit --group-size 4 --resample-uniform-groups 1` runs every task instance 4 times (the members share the
 * seed, the drawn parameters — hence the set-up's start state — and the goal), every group is complete exactly once,
 * a uniform group is followed by one new instance (the limit), and `farm trajectories follow` — stopped mid-stream and
 * started again under the same consumer name — prints every committed episode once; the Python client's groups
 * iterator yields each whole group with its members' records.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { LocalFarm } from "@farm/local-farm";
import { readTrajectories, type StoredEpisode } from "@farm/trajectory";
import { pollUntil } from "@farm/time";
import { REPO, runFarm } from "./fixtures.ts";
import { startFamilyFarm } from "./family-farm.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-groups-"));
const out = path.join(dir, "out");
const FAMILY = path.join(REPO, "tasks/families/settings_wifi_set.family.yaml");
const PREFIX = "{groups-test}";
let farm: LocalFarm;

before(async () => {
  farm = await startFamilyFarm({ familyPath: FAMILY, devices: 3, outDir: out, queuePrefix: PREFIX, service: "groups-test" });
});

after(async () => {
  await farm?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const PY_GROUPS = `
import json, sys
from farm_client import CampaignClient
c = CampaignClient(sys.argv[1])
for members in c.follow_groups(sys.argv[2], group="py-learner", consumer="p1", with_records=True, poll=0.1):
    print(json.dumps({"group": members[0]["groupIndex"], "members": [m["groupMember"] for m in members],
                      "episodeIds": [m["record"]["episodeId"] for m in members], "rewards": [m["record"]["totalReward"] for m in members]}))
`;

/** `farm trajectories follow` as a child; resolves with its stdout lines when it exits. */
function follow(campaign: string, extra: string[]): { child: ReturnType<typeof spawn>; lines: string[]; done: Promise<number | null> } {
  const child = spawn(process.execPath, [path.join(REPO, "services/cli/bin/farm.js"), "trajectories", "follow", campaign, "--consumer", "learner-1", "--group", "grpo", "--redis", farm.redisUrl, "--prefix", PREFIX, ...extra], { cwd: REPO, env: { ...process.env, FARM_LOG_LEVEL: "warn" } });
  const lines: string[] = [];
  let buf = "";
  child.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split("\n");
    buf = parts.pop()!;
    lines.push(...parts.filter((l) => l.length > 0));
  });
  child.stderr!.on("data", () => undefined);
  const done = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, lines, done };
}

test("groups of 4 on 3 devices: members share the instance, every group complete once, a uniform group re-sampled up to the limit; the stream survives a killed consumer", async () => {
  const r = await runFarm(["submit", FAMILY, "--api", farm.schedulerService!.http.url, "--episodes", "4", "--group-size", "4", "--resample-uniform-groups", "1", "--policy", "scripted:settings_wifi_set.ui.jsonl", "--seed", "7", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const id = JSON.parse(r.stdout).campaign.id as string;

  // A consumer stopped by a signal (SIGTERM: it finishes the entry in hand, printed and acknowledged) once it printed a
  // few episodes, while the campaign still runs. (SIGKILL between a print and its XACK repeats that one entry, with the
  // same stream id: services/cli README of `follow`.)
  const first = follow(id, []);
  await pollUntil(async () => (first.lines.length >= 3 ? true : undefined), { timeoutMs: 120_000, intervalMs: 50 });
  first.child.kill("SIGTERM");
  await first.done;

  const st = await pollUntil(async () => {
    const s = await farm.scheduler.status(id);
    return s.state === "running" ? undefined : s;
  }, { timeoutMs: 150_000, intervalMs: 200 });
  assert.ok(st, `campaign ${id} finished`);
  assert.equal(st.state, "completed", JSON.stringify(st.summary));
  // Every episode succeeds with the solution: every group is uniform; one new instance (the limit), so 2 groups.
  assert.equal(st.episodes, 8);
  assert.deepEqual({ ...st.groups, meanReward: st.groups?.meanReward, meanStd: st.groups?.meanStd }, { size: 4, total: 2, completed: 2, uniform: 2, resampled: 1, resampleLimit: 1, failed: 0, meanReward: 1, meanStd: 0 });

  // Started again under the same name: its unacknowledged entries, then the rest; nothing twice, nothing missing.
  const second = follow(id, ["--until-finished"]);
  assert.equal(await second.done, 0);
  const printed = [...first.lines, ...second.lines].map((l) => JSON.parse(l) as { id: string; episodeId: string; groupIndex: number; groupMember: number; groupSize: number; reward: number; file: string });
  const ids = printed.map((m) => m.episodeId).sort();
  assert.deepEqual(ids, Array.from({ length: 8 }, (_, i) => `${id}-${i}`).sort(), `each committed episode printed once: ${ids.join(" ")}`);
  for (const m of printed) {
    const i = Number(m.episodeId.slice(id.length + 1));
    assert.deepEqual([m.groupIndex, m.groupMember, m.groupSize, m.reward], [Math.floor(i / 4), i % 4, 4, 1]);
    assert.ok(fs.existsSync(m.file), m.file);
  }

  const episodes: StoredEpisode[] = [];
  for await (const e of readTrajectories(out)) if (e.campaignId === id) episodes.push(e);
  assert.equal(episodes.length, 8, "one committed record per episode");
  const groups = new Map<number, StoredEpisode[]>();
  for (const e of episodes) groups.set(e.groupIndex!, [...(groups.get(e.groupIndex!) ?? []), e]);
  assert.deepEqual([...groups.keys()].sort(), [0, 1]);
  for (const [g, members] of groups) {
    assert.deepEqual(members.map((e) => e.groupMember).sort(), [0, 1, 2, 3], `group ${g}: every member once`);
    const [m0] = members;
    for (const e of members) {
      assert.equal(e.groupSize, 4);
      assert.equal(e.seed, m0!.seed, `group ${g}: one seed`);
      assert.deepEqual(e.params, m0!.params, `group ${g}: the same drawn parameters (so the same set-up: Wi-Fi ${m0!.params?.initial_value})`);
      assert.equal(e.goal, m0!.goal);
      assert.equal(e.success, 1);
    }
  }
  assert.notEqual(groups.get(1)![0]!.seed, groups.get(0)![0]!.seed, "the re-sampled instance has a new seed");
  assert.ok(new Set(episodes.map((e) => e.deviceSerial)).size >= 2, "members ran on several devices");

  // The Python client: complete groups from the stream through the scheduler's API, each member's record from its file.
  // Asynchronously: the scheduler it talks to serves from this process.
  const py = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("/usr/bin/python3", ["-c", PY_GROUPS, farm.schedulerService!.http.url, id], { env: { ...process.env, PYTHONPATH: path.join(REPO, "clients/python") }, timeout: 60_000 });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
  assert.equal(py.status, 0, py.stderr);
  const pyGroups = py.stdout.trim().split("\n").map((l) => JSON.parse(l) as { group: number; members: number[]; episodeIds: string[]; rewards: number[] });
  assert.deepEqual(pyGroups.map((g) => g.group).sort(), [0, 1]);
  for (const g of pyGroups) {
    assert.deepEqual(g.members, [0, 1, 2, 3]);
    assert.deepEqual(g.episodeIds, g.members.map((m) => `${id}-${g.group * 4 + m}`), "the records read from the files are the members'");
    assert.deepEqual(g.rewards, [1, 1, 1, 1]);
  }

  const inspect = await runFarm(["trajectories", "inspect", out, "--json"]);
  const summary = JSON.parse(inspect.stdout) as { groups?: { complete: number; uniform: number; incomplete: number } };
  assert.deepEqual({ complete: summary.groups?.complete, uniform: summary.groups?.uniform, incomplete: summary.groups?.incomplete }, { complete: 2, uniform: 2, incomplete: 0 });
});
