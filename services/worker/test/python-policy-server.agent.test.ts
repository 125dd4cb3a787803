/**
 * The reference Python policy server (clients/python/farm_client/policy_server.py, Debian's /usr/bin/python3) as a
 * GUI agent behind the `http:` policy: an episode of the Todo app on a simulated device where each request carries
 * the goal and the screen as elements and each answer is a click on a clickable element of the screen it was shown,
 * recorded as given (and as resolved, or invalid while the UI actuator is not on this branch).
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { after, before, test } from "node:test";
import { AdbDriver } from "@farm/adb";
import { DeviceSession } from "@farm/episode";
import { httpPolicy, type UiElement } from "@farm/policy";
import { loadTaskFile } from "@farm/task";
import { withDeadline } from "@farm/time";
import { FAST_EPISODE, REPO, startHarness, type Harness } from "./harness.ts";

const TODO_FILE = path.join(REPO, "tasks/todo_create_note.textproto");
let h: Harness;
let server: ChildProcess;
let url: string;

before(async () => {
  h = await startHarness(1);
  server = spawn("/usr/bin/python3", ["-m", "farm_client.policy_server", "--agent", "ui-random", "--port", "0"], { cwd: path.join(REPO, "clients/python"), env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" }, stdio: ["ignore", "pipe", "inherit"] });
  const line = await withDeadline(
    new Promise<string>((resolve) => createInterface({ input: server.stdout! }).once("line", resolve)),
    30_000,
    () => new Error("the policy server printed no address in 30 s"),
  );
  url = /listening on (http:\/\/\S+)/.exec(line)![1]!;
});

after(async () => {
  server?.kill();
  await h?.close();
});

test("the Python server's ui-random agent: goal and elements in, clicks on clickable elements out, recorded per step", async () => {
  const driver = new AdbDriver({ port: h.adb.port });
  const session = await DeviceSession.open({ device: driver.device(h.sims.devices[0]!.serial), task: loadTaskFile(TODO_FILE), config: { ...FAST_EPISODE, logSettleMs: 5, apkDirs: [path.join(REPO, "tasks/apks")] } });
  try {
    assert.equal(session.state, "ready", session.unusableReason);
    const policy = httpPolicy(`${url}/act`, { needsElements: true });
    const traj = await session.runEpisode({ seed: 4, index: 0, policy, a11yEvery: 1, limits: { maxEpisodeSteps: 5 } });
    await policy.close();
    assert.equal(traj.cause, "step_limit", `${traj.cause}: ${traj.causeDetail}`);
    assert.ok(traj.steps.length >= 5, "every step answered by the server");
    assert.equal(traj.goal, "Create a note titled milk containing 2 litres");
    // The server's agent version (X-Policy-Version on every answer) is each step's policy version (issue 38).
    assert.ok(traj.steps.every((st) => st.policyVersion === "random-click-1" && typeof st.policyMs === "number"), JSON.stringify(traj.steps.map((st) => st.policyVersion)));
    assert.deepEqual([traj.firstPolicyVersion, traj.lastPolicyVersion], ["random-click-1", "random-click-1"]);
    // Step k's answer was chosen on the elements observed before it (the first observation's for step 1).
    let shown: UiElement[] = traj.initialA11y?.elements ?? [];
    assert.ok(shown.length > 0, "the first observation had elements");
    for (const st of traj.steps) {
      const given = JSON.parse(st.ui!.given) as { action_type: string; index?: number };
      const clickable = shown.filter((e) => e.is_clickable);
      if (clickable.length === 0) assert.equal(given.action_type, "navigate_back");
      else assert.ok(given.action_type === "click" && clickable.some((e) => e.index === given.index), `step ${st.index}: ${st.ui!.given} on ${JSON.stringify(clickable.map((e) => e.index))}`);
      assert.ok(st.ui!.resolved !== undefined || st.ui!.invalid !== undefined, "carried out, or recorded as invalid");
      shown = st.a11y?.elements ?? [];
    }
  } finally {
    await session.close();
    await driver.close();
  }
});
