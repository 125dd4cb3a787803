/**
 * Per-episode game configs (issue 28): the episode's RL_TASK_GAME_CONFIG replaces the task's in the reset steps'
 * start_activity extras (or is added), quoted so the app receives it as one argument; on a simulated device the Todo
 * app rewards the note the episode's config names, not the one the task file names.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { AdbDriver } from "@farm/adb";
import { quoteExtraArgs } from "@farm/adb/testing";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { scriptedPolicy } from "@farm/policy";
import { startSimulatedDevices } from "@farm/simulator";
import { gameConfigRefusal, loadTaskFile, type LoadedTask } from "@farm/task";
import { DeviceSession, TaskNotRunnableError } from "../src/index.ts";
import { resetStepsWithGameConfig, withGameConfigExtra } from "@farm/episode/testing";
import { APK_DIR, REPO } from "./fixtures.ts";

/** What the app receives: the driver's quote removal of the joined extra args. */
const received = (args: readonly string[]): string[] => quoteExtraArgs(args).words;

test("the game config extra's value is replaced, the other words kept", () => {
  // As tasks/todo_create_note.textproto holds them (the device shell removes these quotes).
  const task = [`--ez`, `"RL_TASK_ENABLED"`, `"true"`, `--es`, `"RL_TASK_GAME_CONFIG"`, `'{"title":"milk","body":"2 litres"}'`];
  const json = JSON.stringify({ title: "it's \"quoted\" $HOME `x`", body: "a; rm -rf /" });
  assert.deepEqual(received(withGameConfigExtra(task, json)), ["--ez", "RL_TASK_ENABLED", "true", "--es", "RL_TASK_GAME_CONFIG", json]);
});

test("the game config extra is added when the step has none", () => {
  const json = JSON.stringify({ title: "eggs" });
  assert.deepEqual(received(withGameConfigExtra([], json)), ["--es", "RL_TASK_GAME_CONFIG", json]);
  assert.deepEqual(received(withGameConfigExtra(["--ei", "LEVEL", "3"], json)), ["--ei", "LEVEL", "3", "--es", "RL_TASK_GAME_CONFIG", json]);
});

test("a start-snapshot reset, or a task whose reset starts no activity, refuses game configs", () => {
  const steps = [{ action: { kind: "adb" as const, request: { timeoutSec: 0, cmd: { command: "start_activity" as const, fullActivity: "a/.B", extraArgs: [], forceStop: true } } }, line: 3 }];
  assert.equal(gameConfigRefusal({ id: "t", resetSteps: steps }, "steps"), undefined);
  assert.equal(gameConfigRefusal({ id: "t", resetSteps: steps }, "setup-snapshot"), undefined);
  assert.match(gameConfigRefusal({ id: "t", resetSteps: steps }, "start-snapshot") ?? "", /start-snapshot/);
  assert.match(gameConfigRefusal({ id: "t", resetSteps: [] }, "steps") ?? "", /start no activity/);
});

test("only start_activity requests change", () => {
  const t = loadTaskFile(path.join(REPO, "tasks/todo_create_note.textproto"), { apkDirs: [APK_DIR] });
  const steps = resetStepsWithGameConfig(t.task.resetSteps, { title: "eggs" });
  assert.deepEqual(steps[0], t.task.resetSteps[0]);
  const cmd = steps[1]!.action!.kind === "adb" ? steps[1]!.action!.request.cmd : undefined;
  assert.ok(cmd?.command === "start_activity");
  assert.deepEqual(received(cmd.extraArgs).slice(-3), ["--es", "RL_TASK_GAME_CONFIG", '{"title":"eggs"}']);
});

let adb: LocalAdbServer;
let sim: Awaited<ReturnType<typeof startSimulatedDevices>>;
let driver: AdbDriver;
let dir: string;
let todo: LoadedTask;

before(async () => {
  adb = await startAdbServer();
  sim = await startSimulatedDevices({ adbPort: adb.port, count: 1 });
  driver = new AdbDriver({ host: "127.0.0.1", port: adb.port, actionTimeoutMs: 2000, queryTimeoutMs: 2000 });
  dir = await mkdtemp(path.join(os.tmpdir(), "game-config-"));
  todo = loadTaskFile(path.join(REPO, "tasks/todo_create_note.textproto"), { apkDirs: [APK_DIR] });
});

after(async () => {
  await (driver as unknown as { close?: () => Promise<void> }).close?.();
  await sim?.close();
  await adb?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The task's scripted solution (saves "milk" / "2 litres"), or with its first tap of key k dropped (saves "mil"). */
async function script(name: "milk" | "mil"): Promise<string> {
  const lines = (await readFile(path.join(REPO, "tasks/solutions/todo_create_note.jsonl"), "utf8")).split("\n");
  const k = lines.findIndex((l) => l.startsWith("// tap key k"));
  assert.ok(k > 0, "the solution taps key k");
  if (name === "mil") lines.splice(k, 3);
  const file = path.join(dir, `${name}.jsonl`);
  await writeFile(file, lines.join("\n"));
  return file;
}

test("two episodes with different game configs are rewarded for different notes", async () => {
  const s = await DeviceSession.open({ device: driver.device(sim.devices[0]!.serial), task: todo, config: { settleMs: 20, stepTimeoutMs: 5000, resetTimeoutMs: 20_000, appScreenCheckEverySteps: 0 } });
  try {
    assert.equal(s.state, "ready", s.unusableReason);
    const run = async (index: number, saves: "milk" | "mil", gameConfig: Record<string, unknown>) => {
      const policy = await scriptedPolicy(await script(saves), { atEnd: "lift" });
      try {
        return await s.runEpisode({ seed: index, index, policy, gameConfig, limits: { maxEpisodeSteps: 60 } });
      } finally {
        await policy.close();
      }
    };
    const mil = await run(0, "mil", { title: "mil", body: "2 litres" });
    assert.equal(mil.totalReward, 1, `${mil.cause}: ${mil.causeDetail}`);
    assert.equal(mil.cause, "episode_end");
    const milk = await run(1, "milk", { title: "milk", body: "2 litres" });
    assert.equal(milk.totalReward, 1, `${milk.cause}: ${milk.causeDetail}`);
    // The same "milk" note is not the goal of an episode configured for "mil".
    const other = await run(2, "milk", { title: "mil", body: "2 litres" });
    assert.equal(other.totalReward, 0);
    assert.equal(other.cause, "step_limit");
    // Without a game config the task file's own goal (milk) stands.
    const policy = await scriptedPolicy(await script("mil"), { atEnd: "lift" });
    const plain = await s.runEpisode({ seed: 3, index: 3, policy, limits: { maxEpisodeSteps: 60 } });
    await policy.close();
    assert.equal(plain.totalReward, 0);
  } finally {
    await s.close();
  }
});

test("a game config with reset mode start-snapshot is refused before anything runs", async () => {
  const s = await DeviceSession.open({ device: driver.device(sim.devices[0]!.serial), task: todo, config: { settleMs: 20 } });
  try {
    const policy = await scriptedPolicy(await script("milk"));
    await assert.rejects(s.runEpisode({ seed: 0, index: 0, policy, gameConfig: { title: "x" }, resetMode: "start-snapshot" }), (e: unknown) => e instanceof TaskNotRunnableError && /start-snapshot/.test(e.message));
    await policy.close();
  } finally {
    await s.close();
  }
});
