/**
 * Test helpers: a remote world driven over dm_env_rpc by the random policy, as an outside client would,
 * and the app's own logged score to check its rewards against.
 */
import assert from "node:assert/strict";
import { AdbDriver } from "@farm/adb";
import { connectEnvironment, DataType, EnvironmentState, numbers, tensor, type EnvironmentConnection, type Tensor } from "@farm/dm-env-rpc";
import { randomPolicy, ACTION_TYPES } from "@farm/policy";

export const s = (v: string) => tensor(DataType.STRING, [v]);
export const i32 = (...v: number[]) => tensor(DataType.INT32, v, v.length === 1 ? [] : [v.length]);

export interface WorldRun {
  world: string;
  steps: number;
  reward: number;
  /** States of the episode-ending steps. */
  ends: number[];
  /** Steps whose `grid` extra (id 6, INT32 [4, 4]) held a board the app logged (not the all-zero default). */
  grids: number;
  conn: EnvironmentConnection;
}

/** Creates and joins a world, then takes `steps` random actions (FIRST steps not counted); episodes that end restart. */
export async function runRandomWorld(target: string, settings: Record<string, Tensor>, steps: number, seed: number, opts: { keepOpen?: boolean; token?: string } = {}): Promise<WorldRun> {
  const conn = connectEnvironment(target, opts.token ? { token: opts.token } : {});
  const world = (await conn.request({ create_world: { settings } })).create_world!.world_name;
  const specs = (await conn.request({ join_world: { world_name: world } })).join_world!.specs;
  assert.equal(specs.observations["1"]!.name, "pixels");
  assert.equal(specs.actions["1"]!.name, "action_type");
  assert.deepEqual({ name: specs.observations["6"]!.name, shape: specs.observations["6"]!.shape }, { name: "grid", shape: [4, 4] }, "the task's extras_spec follows the built-in observations");
  await conn.request({ reset: {} });
  const policy = randomPolicy({ seed });
  const screen = { width: 1, height: 1 };
  await policy.reset({ seed, episodeIndex: 0, screen });
  const first = (await conn.request({ step: { requested_observations: [4, 5] } })).step!;
  assert.equal(first.state, EnvironmentState.RUNNING);
  let reward = 0;
  const ends: number[] = [];
  let taken = 0;
  let grids = 0;
  while (taken < steps) {
    const a = await policy.act({ timedeltaUs: 0, orientation: 0, extras: {}, stepIndex: taken, screen });
    const actions = { 1: i32(ACTION_TYPES.indexOf(a.actionType)), 2: tensor(DataType.FLOAT, a.touchPosition, [2]) };
    const r = (await conn.request({ step: { actions, requested_observations: [2, 3, 4, 5, 6] } })).step!;
    taken++;
    // Requested, so present every step: the app's board when it logged one, else the spec's default (zeros).
    const grid = numbers(r.observations["6"]!, "grid");
    assert.equal(grid.length, 16);
    if (grid.some((v) => v !== 0)) grids++;
    reward += numbers(r.observations["4"]!, "reward")[0]!;
    if (r.state !== EnvironmentState.RUNNING) {
      ends.push(r.state);
      break;
    }
  }
  if (!opts.keepOpen) {
    await conn.request({ leave_world: {} });
    await conn.request({ destroy_world: { world_name: world } });
    conn.close();
  }
  return { world, steps: taken, reward, ends, grids, conn };
}

/** The last score the app logged on `serial` (its game since the last reset). */
export async function appLoggedScore(adbPort: number, serial: string): Promise<number> {
  const driver = new AdbDriver({ port: adbPort });
  try {
    const r = await driver.device(serial).shell("logcat -d -v epoch AndroidRLTask:V *:S");
    assert.equal(r.status, "ok", r.message);
    const scores = [...r.stdout.matchAll(/AndroidRLTask: score: (\d+)/g)].map((m) => Number(m[1]));
    return scores[scores.length - 1] ?? 0;
  } finally {
    await driver.close();
  }
}
