/**
 * The episode's byte budget for recorded observations (observation-budget.ts), on a simulated device whose screen
 * reads as a ~5 MB tree at every step: past the budget no more trees are recorded (counted, marked) and the episode
 * goes on, or it ends as `observation_budget`. The soak prints the process's RSS: episodes of 5 MB trees at every
 * step, with the budget, keep it flat; without it one episode holds every tree until its end.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { AdbDriver, isScreenTree, type Device, type ScreenTree } from "@farm/adb";
import type { Policy } from "@farm/policy";
import { DeviceSession, type EpisodeConfig, type EpisodeTrajectory, type ObservationBudgetSpec } from "../src/index.ts";
import { task } from "./fixtures.ts";

let adb: LocalAdbServer;
let fleet: Awaited<ReturnType<typeof startSimulatedDevices>>;
let driver: AdbDriver;
let session: DeviceSession;

const CONFIG: EpisodeConfig = { settleMs: 0, logSettleMs: 0, stepTimeoutMs: 20_000, resetTimeoutMs: 30_000, adbCallTimeoutMs: 10_000, recoveryBackoffMs: 100, recoveryWaitMs: 5000, appScreenCheckEverySteps: 0 };
const MB = 1024 * 1024;
/** max_episode_steps: the episode ends at step STEPS + 1 (step_limit). */
const STEPS = 30;

/** The device's own tree, with one more node whose text makes it ~5 MB (a fresh string each read, as a real read is). */
function bigTrees(real: Device): Device {
  let n = 0;
  const screenTree = async (o?: Parameters<NonNullable<Device["screenTree"]>>[0]): Promise<Awaited<ReturnType<NonNullable<Device["screenTree"]>>>> => {
    const t = await real.screenTree!(o);
    if (!isScreenTree(t)) return t;
    const w = t.windows[0]!;
    const text = `${n++}:`.padEnd(5 * MB, "x");
    const node = { ...w.tree.nodes[0]!, uniqueId: 999_999, text, childIds: [], depth: 1 };
    const big: ScreenTree = { ...t, windows: [{ ...w, tree: { nodes: [...w.tree.nodes, node] } }, ...t.windows.slice(1)], nodeCount: t.nodeCount + 1, bytes: t.bytes + text.length };
    return big;
  };
  return new Proxy(real, {
    get(target, prop) {
      if (prop === "screenTree") return screenTree;
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** Touches in a corner, STEPS of them (the screen is read as a tree for the record only). */
const toucher: Policy = {
  name: "toucher",
  version: "1",
  needsPixels: false,
  needsElements: false,
  async reset() {},
  async act() {
    return { actionType: "TOUCH" as const, touchPosition: [0.02, 0.98] };
  },
  async close() {},
};

before(async () => {
  adb = await startAdbServer();
  fleet = await startSimulatedDevices({ adbPort: adb.port, count: 1 });
  driver = new AdbDriver({ port: adb.port });
  const device = bigTrees(driver.device(fleet.devices[0]!.serial));
  session = await DeviceSession.open({ device, task: task({ id: "budget_notes", app: "notes", maxEpisodeSteps: STEPS }), config: CONFIG });
  assert.equal(session.state, "ready", session.unusableReason);
});

after(async () => {
  await session?.close();
  await driver?.close();
  await fleet?.close();
  await adb?.close();
});

const run = (index: number, observationBudget?: ObservationBudgetSpec): Promise<EpisodeTrajectory> =>
  session.runEpisode({ seed: index, index, policy: toucher, a11yEvery: 1, ...(observationBudget ? { limits: { observationBudget } } : {}) });

const recordedTrees = (t: EpisodeTrajectory) => t.steps.filter((s) => s.a11y).length;

test("past the budget no more trees are recorded (counted, marked) and the episode goes on; or it ends as observation_budget", async () => {
  const kept = await run(1, { maxBytes: 20 * MB });
  assert.equal(kept.steps.length, STEPS + 1, `${kept.cause}: ${kept.causeDetail}`);
  assert.equal(kept.cause, "step_limit");
  // A 5 MB tree counts ~10 MB (its JSON and its element list, which holds the text too): FIRST and a step or two fill 20 MB.
  assert.ok(recordedTrees(kept) <= 3 && recordedTrees(kept) >= 1, `recorded ${recordedTrees(kept)}`);
  assert.equal(kept.counters.observation_budget_exceeded, 1);
  assert.ok((kept.counters.observations_dropped_trees ?? 0) >= STEPS - 4, JSON.stringify(kept.counters));
  assert.ok(kept.counters.observation_bytes! >= 20 * MB && kept.counters.observation_bytes! < 26 * MB, String(kept.counters.observation_bytes));

  const ended = await run(2, { maxBytes: 20 * MB, onExceeded: "end" });
  assert.equal(ended.outcome, "truncated");
  assert.equal(ended.cause, "observation_budget");
  assert.match(ended.causeDetail, /budget of 20971520 bytes/);
  assert.ok(ended.steps.length < STEPS && ended.steps.length >= 1, String(ended.steps.length));

  const unbounded = await run(3);
  assert.equal(recordedTrees(unbounded), STEPS + 1);
  assert.equal(unbounded.counters.observation_bytes, undefined, "no budget, no budget counters");
});

test("soak: episodes with 5 MB trees at every step keep the process's RSS flat with the budget (RSS printed)", async () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  const rssMb = () => {
    gc?.();
    return Math.round(process.memoryUsage().rss / MB);
  };
  const peakOf = async (budget: ObservationBudgetSpec | undefined, episodes: number): Promise<{ before: number; peak: number; after: number }> => {
    const before = rssMb();
    let peak = before;
    const timer = setInterval(() => (peak = Math.max(peak, Math.round(process.memoryUsage().rss / MB))), 20);
    try {
      for (let i = 0; i < episodes; i++) {
        const t = await run(100 + i, budget);
        assert.equal(t.steps.length, STEPS + 1);
      }
    } finally {
      clearInterval(timer);
    }
    return { before, peak, after: rssMb() };
  };
  const bounded = await peakOf({ maxBytes: 20 * MB }, 4);
  const unbounded = await peakOf(undefined, 1);
  process.stdout.write(`# RSS with a 20 MB budget, 4 episodes x ${STEPS} steps of 5 MB trees: before ${bounded.before} MB, peak ${bounded.peak} MB, after ${bounded.after} MB\n`);
  process.stdout.write(`# RSS without a budget, 1 episode: before ${unbounded.before} MB, peak ${unbounded.peak} MB, after ${unbounded.after} MB\n`);
  // Flat: four budgeted episodes end where they began (within what a heap's churn moves), and stay far below one unbounded episode's peak.
  assert.ok(bounded.after - bounded.before < 120, `RSS grew ${bounded.after - bounded.before} MB over 4 episodes`);
  assert.ok(bounded.peak - bounded.before < unbounded.peak - unbounded.before, "the budget bounds the peak");
});
