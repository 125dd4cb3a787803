/**
 * DeepMind's dm_env_rpc compliance suites (dm_env_rpc/v1/compliance/*.py: CreateDestroyWorld, JoinLeaveWorld,
 * Reset, ResetWorld, Step), ported check by check to a Node client against a real worker (Redis, adb server,
 * simulated emulators), since the Python suites cannot be installed here. One test per suite check, named
 * after it; what each sends and expects follows the suite (a subclass's fixtures are the `FIXTURES` below).
 * Where a check is vacuous for our specs (no 2-D actions) it also checks the nearest
 * case our specs do have, said in its body.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { connectEnvironment, DataType, DmEnvRpcError, EnvironmentState, grpc, numbers, payloadName, payloadOf, tensor, type ActionObservationSpecs, type EnvironmentConnection, type Settings, type Tensor, type TensorSpec } from "@farm/dm-env-rpc";
import { resolveWorkerConfig, WorkerService } from "../src/index.ts";
import { FAST_EPISODE, startHarness, TASK_FILE, until, type Harness } from "./harness.ts";
import { i32, s } from "./remote-env-client.ts";

let h: Harness;
let worker: WorkerService;
let target: string;
const open: EnvironmentConnection[] = [];
const connect = () => {
  const c = connectEnvironment(target);
  open.push(c);
  return c;
};

before(async () => {
  h = await startHarness(3);
  worker = await WorkerService.create(
    resolveWorkerConfig({ redisUrl: h.redis.url, queuePrefix: h.prefix, adbPort: h.adb.port, taskPaths: [TASK_FILE], outDir: path.join(h.tmp, "out"), metricsPort: 0, drainTimeoutMs: 5000, episode: { ...FAST_EPISODE, logSettleMs: 5 }, envPort: 0 }),
  );
  await worker.start();
  target = worker.envAddress!;
  await until("3 devices ready", 60_000, () => Object.values(worker.deviceStates()).filter((st) => st === "ready").length === 3, { everyMs: 100 });
});

after(async () => {
  for (const c of open) c.cancel();
  await worker?.close();
  await h?.close();
});

/** What a server author's subclass of each suite provides. */
const FIXTURES = {
  required_world_settings: (): Settings => ({ task: s(h.task.task.id) }),
  /** The settings of the worlds the other suites' setUp creates: no step limit, so no episode ends mid-check. */
  world_settings: (): Settings => ({ task: s(h.task.task.id), max_episode_steps: i32(0), seed: i32(1) }),
  invalid_world_settings: (): Settings => ({ seed: s("not a number"), max_episode_steps: i32(-1), frame_size: i32(0, 5), no_such_setting: i32(1), step_timeout_ms: tensor(DataType.DOUBLE, [0.5]) }),
  has_multiple_world_support: true,
  invalid_join_settings: (): Settings => ({ no_such_setting: i32(1) }),
  /** action_type LIFT with a touch position: the step changes nothing on the screen. */
  required_actions: (): Record<string, Tensor> => ({ 1: i32(1), 2: tensor(DataType.FLOAT, [0.5, 0.5], [2]) }),
};

/** assertRaises(DmEnvRpcError): the request is answered with an error (and the stream goes on). */
const refused = (p: Promise<unknown>, re?: RegExp, code?: number) =>
  assert.rejects(p, (e: unknown) => e instanceof DmEnvRpcError && (code === undefined || e.code === code) && (!re || re.test(e.message)));

async function createWorld(c: EnvironmentConnection, settings: Settings = FIXTURES.world_settings()): Promise<string> {
  return (await c.request({ create_world: { settings } })).create_world!.world_name;
}

async function destroyWorld(c: EnvironmentConnection, name: string | undefined): Promise<void> {
  if (name !== undefined) await c.request({ destroy_world: { world_name: name } });
}

describe("CreateDestroyWorld (compliance/create_destroy_world.py)", () => {
  test("test_can_create_and_destroy_world", async () => {
    const c = connect();
    await destroyWorld(c, await createWorld(c, FIXTURES.required_world_settings()));
  });

  test("test_cannot_create_world_with_less_than_required_settings", async () => {
    const c = connect();
    const settings = FIXTURES.required_world_settings();
    for (const name of Object.keys(settings)) {
      const sans = { ...settings };
      delete sans[name];
      await refused(createWorld(c, sans), new RegExp(`'${name}'`), grpc.status.INVALID_ARGUMENT);
    }
  });

  test("test_cannot_create_world_with_invalid_settings", async () => {
    const c = connect();
    for (const [name, t] of Object.entries(FIXTURES.invalid_world_settings())) {
      await refused(createWorld(c, { [name]: t, ...FIXTURES.required_world_settings() }), new RegExp(name), grpc.status.INVALID_ARGUMENT);
    }
    assert.deepEqual(worker.remoteWorlds(), {}, "no world was created");
  });

  test("test_world_name_is_unique", async () => {
    assert.ok(FIXTURES.has_multiple_world_support);
    const c = connect();
    let w1: string | undefined;
    let w2: string | undefined;
    try {
      w1 = await createWorld(c, FIXTURES.required_world_settings());
      w2 = await createWorld(c, FIXTURES.required_world_settings());
      assert.notEqual(w1, w2);
    } finally {
      await destroyWorld(c, w1);
      await destroyWorld(c, w2);
    }
  });

  test("test_cannot_destroy_uncreated_world", async () => {
    await refused(destroyWorld(connect(), "foo"));
  });
});

/** A tensor spec is consistent: at most one negative dimension; bounds of the spec's dtype, broadcastable, min <= max. */
function checkTensorSpec(spec: TensorSpec): void {
  assert.ok(spec.shape.filter((d) => d < 0).length <= 1, `${spec.name}: more than one negative dimension`);
  const n = spec.shape.reduce((a, d) => a * Math.max(d, 1), 1);
  const bound = (b: TensorSpec["min"]) => {
    if (!b || Object.keys(b).length === 0) return undefined;
    assert.equal(payloadName(b as Tensor), payloadOf(spec.dtype), `${spec.name}: bound dtype`);
    const v = numbers(b as Tensor, spec.name);
    assert.ok(v.length === 1 || v.length === n, `${spec.name}: bound of ${v.length} values for shape [${spec.shape}]`);
    return v;
  };
  const lo = bound(spec.min);
  const hi = bound(spec.max);
  if (lo && hi) for (let i = 0; i < n; i++) assert.ok(lo[lo.length === 1 ? 0 : i]! <= hi[hi.length === 1 ? 0 : i]!, `${spec.name}: min <= max`);
}

const duplicates = (names: string[]) => names.filter((n, i) => names.indexOf(n) !== i);

describe("JoinLeaveWorld (compliance/join_leave_world.py)", () => {
  let world: string;
  let owner: EnvironmentConnection;
  before(async () => {
    owner = connect();
    world = await createWorld(owner);
  });
  after(async () => destroyWorld(owner, world));

  /** Each check on its own stream; tearDown leaves the world. */
  const check = (name: string, body: (c: EnvironmentConnection, join: () => Promise<ActionObservationSpecs>) => Promise<void>) =>
    test(name, async () => {
      const c = connect();
      try {
        await body(c, async () => (await c.request({ join_world: { world_name: world, settings: {} } })).join_world!.specs);
      } finally {
        await c.request({ leave_world: {} });
        c.close();
      }
    });

  check("test_can_join", async (_c, join) => void (await join()));
  check("test_cannot_join_with_wrong_world_name", async (c) => refused(c.request({ join_world: { world_name: "invalid_world_name" } }), undefined, grpc.status.NOT_FOUND));
  check("test_cannot_join_world_with_invalid_settings", async (c) => {
    for (const [name, t] of Object.entries(FIXTURES.invalid_join_settings())) {
      await refused(c.request({ join_world: { world_name: world, settings: { [name]: t } } }), new RegExp(name), grpc.status.INVALID_ARGUMENT);
    }
  });
  check("test_cannot_join_world_twice", async (c, join) => {
    await join();
    await refused(c.request({ join_world: { world_name: world } }), undefined, grpc.status.FAILED_PRECONDITION);
  });
  check("test_action_specs_have_unique_names", async (_c, join) => assert.deepEqual(duplicates(Object.values((await join()).actions).map((x) => x.name)), []));
  check("test_action_specs_for_consistency", async (_c, join) => Object.values((await join()).actions).forEach(checkTensorSpec));
  check("test_observation_specs_have_unique_names", async (_c, join) => assert.deepEqual(duplicates(Object.values((await join()).observations).map((x) => x.name)), []));
  check("test_observation_specs_for_consistency", async (_c, join) => Object.values((await join()).observations).forEach(checkTensorSpec));
  check("test_can_leave_world_if_not_joined", async (c) => void (await c.request({ leave_world: {} })));
  check("test_can_leave_world_after_joining", async (c, join) => {
    await join();
    await c.request({ leave_world: {} });
  });
  check("test_can_rejoin_world_after_leaving", async (c, join) => {
    await join();
    await c.request({ leave_world: {} });
    await join();
  });
});

describe("Reset (compliance/reset.py)", () => {
  let world: string;
  let owner: EnvironmentConnection;
  before(async () => {
    owner = connect();
    world = await createWorld(owner);
  });
  after(async () => destroyWorld(owner, world));

  const check = (name: string, body: (c: EnvironmentConnection, join: () => Promise<ActionObservationSpecs>) => Promise<void>) =>
    test(name, async () => {
      const c = connect();
      try {
        await body(c, async () => (await c.request({ join_world: { world_name: world } })).join_world!.specs);
      } finally {
        await c.request({ leave_world: {} });
        c.close();
      }
    });
  const reset = async (c: EnvironmentConnection) => (await c.request({ reset: { settings: {} } })).reset!.specs;

  check("test_reset_resends_the_specs", async (c, join) => {
    const joined = await join();
    assert.deepEqual(await reset(c), joined);
  });
  check("test_cannot_reset_if_not_joined_to_world", async (c) => refused(reset(c), undefined, grpc.status.FAILED_PRECONDITION));
  check("test_can_reset_multiple_times", async (c, join) => {
    const joined = await join();
    await reset(c);
    assert.deepEqual(await reset(c), joined);
  });
});

describe("ResetWorld (compliance/reset_world.py)", () => {
  let world: string;
  let owner: EnvironmentConnection;
  before(async () => {
    owner = connect();
    world = await createWorld(owner);
  });
  after(async () => destroyWorld(owner, world));
  const resetWorld = (c: EnvironmentConnection, name: string) => c.request({ reset_world: { world_name: name, settings: {} } });

  test("test_cannot_reset_invalid_world", async () => refused(resetWorld(connect(), "invalid_world_name"), undefined, grpc.status.NOT_FOUND));
  test("test_can_reset_world_not_joined_to", async () => void (await resetWorld(connect(), world)));
  test("test_can_reset_world_when_joined_to_it", async () => {
    const c = connect();
    try {
      await c.request({ join_world: { world_name: world, settings: {} } });
      await resetWorld(c, world);
    } finally {
      await c.request({ leave_world: {} });
    }
  });
});

const FLOAT32_MAX = 3.4028234663852886e38;
const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const typeRange = (dtype: number) => (dtype === DataType.FLOAT ? { min: -FLOAT32_MAX, max: FLOAT32_MAX } : dtype === DataType.INT32 ? INT32 : { min: -Infinity, max: Infinity });
const isNumeric = (spec: TensorSpec) => spec.dtype !== DataType.STRING && spec.dtype !== DataType.PROTO;
const bounds = (spec: TensorSpec, which: "min" | "max") => {
  const b = spec[which];
  return b && Object.keys(b).length > 0 ? numbers(b as Tensor, spec.name) : undefined;
};
const fixedShape = (spec: TensorSpec) => spec.shape.map((d) => (d < 0 ? 1 : d));
const count = (shape: number[]) => shape.reduce((a, d) => a * d, 1);
/** _create_test_value: the spec's min everywhere (numeric) or the empty string (no UI action), at its shape (variable dimensions as 1). */
const testValues = (spec: TensorSpec): number[] | string[] =>
  isNumeric(spec) ? new Array<number>(count(fixedShape(spec))).fill(bounds(spec, "min")?.[0] ?? 0) : new Array<string>(count(fixedShape(spec))).fill("");

describe("Step (compliance/step.py)", () => {
  let world: string;
  let owner: EnvironmentConnection;
  let specs: ActionObservationSpecs;
  before(async () => {
    owner = connect();
    world = await createWorld(owner);
  });
  after(async () => destroyWorld(owner, world));

  /** Each check joined to the world on its own stream (the connection "already joined to a world"); leaves after. */
  const check = (name: string, body: (step: (actions?: Record<string, Tensor>, requested?: number[]) => Promise<{ state: number; observations: Record<string, Tensor> }>) => Promise<void>, opts: { stepBefore?: boolean } = {}) =>
    test(name, async () => {
      const c = connect();
      try {
        specs = (await c.request({ join_world: { world_name: world } })).join_world!.specs;
        const step = async (actions: Record<string, Tensor> = {}, requested: number[] = []) =>
          (await c.request({ step: { actions: { ...FIXTURES.required_actions(), ...actions }, requested_observations: requested } })).step!;
        if (opts.stepBefore) assert.equal((await step()).state, EnvironmentState.RUNNING, "the first step starts the sequence");
        await body(step);
      } finally {
        await c.request({ leave_world: {} });
        c.close();
      }
    });
  const obsUids = () => Object.keys(specs.observations).map(Number);
  const actionUids = () => Object.keys(specs.actions).map(Number);
  const uidNotIn = (uids: number[]) => {
    let uid = 0;
    while (uids.includes(uid)) uid++;
    return uid;
  };
  const numeric = () => Object.entries(specs.actions).filter(([, sp]) => isNumeric(sp));
  const invalidArg = (uid: string | number) => (e: unknown) => e instanceof DmEnvRpcError && e.code === grpc.status.INVALID_ARGUMENT && e.message.includes(String(uid));

  // Observations
  check("test_no_observations_returned_if_not_requested", async (step) => assert.deepEqual((await step()).observations, {}));
  check("test_requested_observations_are_returned", async (step) => {
    const r = await step({}, obsUids());
    assert.deepEqual(Object.keys(r.observations).map(Number).sort(), obsUids().sort());
  });
  check("test_cannot_request_invalid_observation_uid", async (step) => {
    const bad = uidNotIn(obsUids());
    await assert.rejects(step({}, [bad]), invalidArg(bad));
  });
  check("test_all_observation_dtypes_match_spec_dtypes", async (step) => {
    const r = await step({}, obsUids());
    for (const [uid, t] of Object.entries(r.observations)) {
      const spec = specs.observations[uid]!;
      assert.equal(payloadName(t), payloadOf(spec.dtype), `observation ${uid} (${spec.name}): dtype`);
      // Beyond the suite: the shape is the spec's too (any length where the spec's dimension is variable).
      const shape = t.shape ?? [];
      assert.ok(shape.length === spec.shape.length && shape.every((d, i) => spec.shape[i]! < 0 || d === spec.shape[i]), `observation ${uid} (${spec.name}): shape [${shape.join(", ")}] vs spec [${spec.shape.join(", ")}]`);
    }
  });
  check("test_all_numerical_observations_in_range", async (step) => {
    const uids = Object.entries(specs.observations).filter(([, sp]) => isNumeric(sp)).map(([u]) => Number(u));
    const r = await step({}, uids);
    for (const [uid, t] of Object.entries(r.observations)) {
      const spec = specs.observations[uid]!;
      const [lo, hi] = [bounds(spec, "min"), bounds(spec, "max")];
      numbers(t, spec.name).forEach((v, i) => {
        if (lo) assert.ok(v >= lo[lo.length === 1 ? 0 : i]!, `${spec.name}[${i}] = ${v} below min`);
        if (hi) assert.ok(v <= hi[hi.length === 1 ? 0 : i]!, `${spec.name}[${i}] = ${v} above max`);
      });
    }
  });
  check("test_duplicated_requested_observations_are_redundant", async (step) => {
    const r = await step({}, [...obsUids(), ...obsUids()]);
    assert.deepEqual(Object.keys(r.observations).map(Number).sort(), obsUids().sort());
  });
  check("test_can_request_each_observation_individually", async (step) => {
    for (const uid of obsUids()) assert.deepEqual(Object.keys((await step({}, [uid])).observations), [String(uid)], `observation ${uid} alone`);
  });

  // Actions
  check("test_first_step_actions_are_ignored", async (step) => {
    const r = await step({ [uidNotIn(actionUids())]: tensor(DataType.INT64, [0]) });
    assert.equal(r.state, EnvironmentState.RUNNING);
  });
  check(
    "test_can_send_each_action_individually",
    async (step) => {
      for (const [uid, spec] of Object.entries(specs.actions)) await step({ [uid]: tensor(spec.dtype, testValues(spec), fixedShape(spec)) });
    },
    { stepBefore: true },
  );
  check(
    "test_cannot_send_wrong_numeric_type_action",
    async (step) => {
      for (const [uid, spec] of numeric()) {
        const wrong = spec.dtype === DataType.DOUBLE ? DataType.FLOAT : DataType.DOUBLE;
        await assert.rejects(step({ [uid]: tensor(wrong, testValues(spec), fixedShape(spec)) }), invalidArg(uid), `action ${uid} (${spec.name}) as dtype ${wrong}`);
      }
    },
    { stepBefore: true },
  );
  check(
    "test_cannot_send_wrong_type_to_nonnumeric_actions",
    async (step) => {
      const nonNumeric = Object.entries(specs.actions).filter(([, sp]) => !isNumeric(sp));
      for (const [uid, spec] of nonNumeric) await assert.rejects(step({ [uid]: tensor(DataType.INT32, [0], fixedShape(spec)) }), invalidArg(uid));
      // ui_action is our one string action; the mirror case, a string sent to each numeric action, is refused as well.
      assert.deepEqual(nonNumeric.map(([, sp]) => sp.name), ["ui_action"]);
      for (const [uid, spec] of numeric()) await assert.rejects(step({ [uid]: tensor(DataType.STRING, new Array(count(fixedShape(spec))).fill("0"), fixedShape(spec)) }), invalidArg(uid));
    },
    { stepBefore: true },
  );
  check(
    "test_cannot_send_invalid_action_uid",
    async (step) => {
      const bad = uidNotIn(actionUids());
      await assert.rejects(step({ [bad]: tensor(DataType.INT64, [0]) }), invalidArg(bad));
    },
    { stepBefore: true },
  );
  const outOfRange = (which: "min" | "max") => async (step: (a: Record<string, Tensor>) => Promise<unknown>) => {
    let tried = 0;
    for (const [uid, spec] of numeric()) {
      const b = bounds(spec, which);
      if (!b) continue;
      const extreme = typeRange(spec.dtype)[which];
      for (let i = 0; i < count(fixedShape(spec)); i++) {
        const limit = b[b.length === 1 ? 0 : i]!;
        if (which === "min" ? !(extreme < limit) : !(extreme > limit)) continue;
        const values = testValues(spec);
        values[i] = extreme;
        tried++;
        await assert.rejects(step({ [uid]: tensor(spec.dtype, values, fixedShape(spec)) }), invalidArg(uid), `action ${uid} (${spec.name})[${i}] = ${extreme}`);
      }
    }
    assert.ok(tried > 0, "our action specs have bounds to test");
  };
  check("test_cannot_send_action_below_min", outOfRange("min"), { stepBefore: true });
  check("test_cannot_send_action_above_max", outOfRange("max"), { stepBefore: true });
  check(
    "test_cannot_send_action_with_wrong_shape",
    async (step) => {
      for (const [uid, spec] of Object.entries(specs.actions)) {
        await assert.rejects(step({ [uid]: tensor(spec.dtype, testValues(spec), [...fixedShape(spec), 1]) }), invalidArg(uid), `action ${uid} (${spec.name}) with an extra dimension`);
      }
    },
    { stepBefore: true },
  );
  check(
    "test_can_send_variable_dimension_tensor_action",
    async (step) => {
      const shaped = Object.entries(specs.actions).filter(([, sp]) => sp.shape.length > 0);
      assert.ok(shaped.length > 0);
      for (const [uid, spec] of shaped) await step({ [uid]: tensor(spec.dtype, testValues(spec), [-1, ...fixedShape(spec).slice(1)]) });
    },
    { stepBefore: true },
  );
  check(
    "test_cannot_send_tensor_with_too_many_variable_dimensions",
    async (step) => {
      for (const [uid, spec] of Object.entries(specs.actions).filter(([, sp]) => sp.shape.length >= 2)) {
        await assert.rejects(step({ [uid]: tensor(spec.dtype, testValues(spec), [-1, -1, ...fixedShape(spec).slice(2)]) }), invalidArg(uid));
      }
      // Our actions have at most one dimension: two variable dimensions on touch_position are refused as well.
      await assert.rejects(step({ 2: tensor(DataType.FLOAT, [0, 0], [-1, -1]) }), invalidArg(2));
    },
    { stepBefore: true },
  );
  check(
    "test_can_send_broadcastable_actions",
    async (step) => {
      for (const [uid, spec] of numeric()) {
        const [lo, hi] = [bounds(spec, "min"), bounds(spec, "max")];
        const hardMin = lo ? Math.max(...lo) : 0;
        if (hi && !(hardMin < Math.min(...hi))) continue; // no scalar satisfies every element's bounds
        await step({ [uid]: tensor(spec.dtype, [hardMin], fixedShape(spec)) });
      }
    },
    { stepBefore: true },
  );
});

test("every world of the suites was destroyed and its device given back", async () => {
  await until("every device back in the pool", 30_000, () => Object.values(worker.deviceStates()).every((st) => st === "ready"), { everyMs: 50, detail: () => JSON.stringify(worker.deviceStates()) });
  assert.deepEqual(worker.remoteWorlds(), {});
});
