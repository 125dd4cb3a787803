/**
 * Outside task code scoring farm episodes (issue 41, "Outside task code"): Debian's /usr/bin/python3 serves a
 * TaskEval-style class (libs/task-protocol/test/fixtures/wifi_tasks.py: template, schema, generate_random_params,
 * initialize_task(env) and is_successful(env), reaching the device only through env.controller.execute_adb_call)
 * with `python3 -m farm_client.task_server`; a family names that server, and `farm run` runs episodes of it on a
 * simulated device. The goal and parameters are the class's, and each episode's success is the score it computed:
 * 1 after the Wi-Fi switch is tapped into the goal's state, 0 when the random policy's touches miss it.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startManagedChild, type ManagedChild } from "@farm/local-services";
import { freePort } from "@farm/net-ports";
import { pollUntil } from "@farm/time";
import { readTrajectories } from "@farm/trajectory";
import { REPO, runFarm } from "./fixtures.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-task-server-"));
let server: ManagedChild;
let family: string;

before(async () => {
  const port = await freePort();
  server = startManagedChild("/usr/bin/python3", ["-m", "farm_client.task_server", "--module", "wifi_tasks", "--path", path.join(REPO, "libs/task-protocol/test/fixtures"), "--port", String(port)], {
    ...process.env,
    PYTHONPATH: path.join(REPO, "clients/python"),
  });
  assert.ok(await pollUntil(() => /task server listening on/.test(server.output()), { timeoutMs: 20_000, intervalMs: 50 }), server.output());
  // The family lives outside the checkout: its task is found relative to it, as a user's own family would be.
  const task = path.relative(dir, path.join(REPO, "tasks/settings_app.textproto"));
  family = path.join(dir, "aw_wifi_set.family.yaml");
  fs.writeFileSync(family, `family: aw_wifi_set\ntask: ${JSON.stringify(task)}\ntask_server: { url: "http://127.0.0.1:${port}", class: "WifiSet", timeout_sec: 60 }\n`);
});

after(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const summaryOf = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!) as { scores?: { scored: number; successes: number; errors: number } };

test("farm run on a family served by Python task code: the class's goal, parameters and score are the episode's", async () => {
  const solved = path.join(dir, "solved");
  const r = await runFarm(["run", family, "--sim", "--episodes", "2", "--seed", "3", "--settle-ms", "20", "--policy", `scripted:${path.join(REPO, "tasks/solutions/settings_wifi_set.ui.jsonl")}`, "--out", solved], { timeoutMs: 180_000 });
  assert.equal(r.code, 0, r.stderr.slice(-3000));
  assert.deepEqual(summaryOf(r.stdout).scores, { scored: 2, successes: 2, success_mean: 1, errors: 0 }, r.stdout);
  const episodes = [];
  for await (const e of readTrajectories(solved)) episodes.push(e);
  assert.equal(episodes.length, 2);
  for (const e of episodes) {
    assert.match(e.goal ?? "", /^Turn Wi-Fi (on|off)\.$/, "the class's template, rendered with its parameters");
    assert.equal(e.goal, `Turn Wi-Fi ${String(e.params?.on_or_off)}.`);
    assert.equal(typeof e.params?.note, "string", "every parameter the class drew is recorded");
    assert.equal(e.success, 1);
    assert.equal(e.scoreError, undefined);
  }

  const random = await runFarm(["run", family, "--sim", "--episodes", "1", "--seed", "5", "--settle-ms", "20", "--policy", "random"], { timeoutMs: 180_000 });
  assert.equal(random.code, 0, random.stderr.slice(-3000));
  assert.deepEqual(summaryOf(random.stdout).scores, { scored: 1, successes: 0, success_mean: 0, errors: 0 }, random.stdout);
});
