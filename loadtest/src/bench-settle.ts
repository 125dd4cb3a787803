/**
 * `farm bench settle [--devices 4] [--episodes-per-device 2] [--policies none,fixed:0,…] [--seed 1]` (issue 36): the
 * scripted solutions of goal tasks (tasks/families todo_note_create, settings_brightness_set; tasks/solutions) on
 * simulated emulators at the `emulator-grpc` motion profile (screens slide in, dialogs and the keyboard animate,
 * Todo's notes list loads behind a spinner), once per settle policy, and one line per policy, the last for `events`:
 *
 *   settle=<spec> steps_per_device_hour=<n> stale_observations=<n> settle_p50_ms=<n> settle_p99_ms=<n> success_rate=<x>
 *
 * steps_per_device_hour: steps over the devices' time in the action loop (from the end of each reset to the end of
 * the episode's last step; resets take the same time under every policy). A step's observation is stale when the
 * simulator's ground truth (`SimAndroid.settledAt`, read in-process, benchmarks only) says an input delivered before it
 * had not finished changing the screen when the observation began. Devices run in this process (the ground truth is
 * in-process), each on one family; the policies run one after the other on the same devices and seeds.
 */
import path from "node:path";
import { A11yForwarderHub, AdbDriver, type GrpcEndpoint } from "@farm/adb";
import { sleep } from "@farm/time";
import { DeviceSession, formatSettleSpec, parseSettleSpec, type EpisodeEvent, type EpisodeTrajectory } from "@farm/episode";
import { startAdbServer } from "@farm/local-services";
import { createLogger } from "@farm/log";
import { policyFromSpec } from "@farm/policy";
import { startSimulatedDevices } from "@farm/simulator";
import { loadTaskFile } from "@farm/task";
import { taskInstanceFor } from "@farm/worker";
import { intOpt } from "./options.ts";
import { REPO } from "./policy-farm.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";

export const DEFAULT_POLICIES = ["none", "fixed:0", "fixed:500", "androidworld", "frames", "events"];
const FAMILIES = ["todo_note_create", "settings_brightness_set"];

export interface SettleLine {
  settle: string;
  steps: number;
  stepsPerDeviceHour: number;
  stale: number;
  p50: number;
  p99: number;
  successRate: number;
  capped: number;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * Observations taken before the effect of their step's action was complete: the action's inputs are those the device
 * received from the step's action on, until the device's next step acted (the action channel may deliver them after
 * the action call returned); the observation is stale when it began before the latest of their ends.
 */
export function staleObservations(steps: readonly { serial: string; actedAt: number; at: number }[], history: (serial: string) => readonly { inputAt: number; settledAt: number }[]): number {
  let stale = 0;
  const bySerial = new Map<string, { actedAt: number; at: number }[]>();
  for (const s of steps) bySerial.set(s.serial, [...(bySerial.get(s.serial) ?? []), s]);
  for (const [serial, list] of bySerial) {
    const h = history(serial);
    list.sort((a, b) => a.actedAt - b.actedAt);
    list.forEach((s, i) => {
      const until = list[i + 1]?.actedAt ?? Infinity;
      const done = Math.max(-Infinity, ...h.filter((r) => r.inputAt >= s.actedAt && r.inputAt < until).map((r) => r.settledAt));
      if (done > s.at) stale++;
    });
  }
  return stale;
}

export function formatSettleLine(l: SettleLine): string {
  return `settle=${l.settle} steps_per_device_hour=${Math.round(l.stepsPerDeviceHour)} stale_observations=${l.stale} settle_p50_ms=${Math.round(l.p50)} settle_p99_ms=${Math.round(l.p99)} success_rate=${l.successRate.toFixed(3)}`;
}

/** Runs the bench; `out` gets one line per policy (after a header). Policies in order; `events` should come last. */
export async function runSettleBench(opts: { devices: number; episodesPerDevice: number; policies: string[]; seed: number; trees?: "forwarder" | "uiautomator"; out: (line: string) => void }): Promise<SettleLine[]> {
  const trees = opts.trees ?? "forwarder";
  const specs = opts.policies.map((p) => parseSettleSpec(p, "--policies"));
  const logger = createLogger({ service: "bench-settle", level: "warn" });
  const adb = await startAdbServer();
  const fleet = await startSimulatedDevices({ adbPort: adb.port, count: opts.devices, latencyProfile: "emulator-grpc", screen: { width: 360, height: 640 }, emulator: { discovery: false } });
  const endpoints: Record<string, GrpcEndpoint> = {};
  for (const e of fleet.emulators) endpoints[e.serial] = { address: `127.0.0.1:${e.grpc!.port}` };
  // Trees as AndroidEnv reads them (its accessibility forwarder), or by `uiautomator dump` (which waits for an idle screen itself).
  const hub = trees === "forwarder" ? new A11yForwarderHub() : undefined;
  const driver = new AdbDriver({ host: "127.0.0.1", port: adb.port, actionTimeoutMs: 10_000, queryTimeoutMs: 10_000, logger, grpc: { mode: "config", endpoints }, ...(hub ? { a11y: { forwarder: hub } } : {}) });
  const lines: SettleLine[] = [];
  // Per step: when its observation began, and the device it ran on (for the ground truth).
  let observed: { serial: string; actedAt: number; at: number; settleMs?: number; capped?: boolean }[] = [];
  const onEvent = (e: EpisodeEvent) => {
    if (e.type === "step" && e.observedAt !== undefined) observed.push({ serial: e.serial, actedAt: e.actedAt ?? e.observedAt, at: e.observedAt, ...(e.settle ? { settleMs: e.settle.ms, capped: e.settle.capped } : {}) });
  };
  const sessions: { session: DeviceSession; family: string; serial: string }[] = [];
  try {
    for (let i = 0; i < opts.devices; i++) {
      const family = FAMILIES[i % FAMILIES.length]!;
      const loaded = loadTaskFile(path.join(REPO, "tasks/families", `${family}.family.yaml`), { apkDirs: [path.join(REPO, "tasks/apks")] });
      const serial = fleet.devices[i]!.serial;
      const session = await DeviceSession.open({ device: driver.device(serial), task: loaded, logger, onEvent, config: { apkDirs: [path.join(REPO, "tasks/apks")], settleMs: 20, logSettleMs: 0, stepTimeoutMs: 30_000, resetTimeoutMs: 60_000, adbCallTimeoutMs: 10_000, appScreenCheckEverySteps: 0, frameEvery: 0 } });
      if (session.state !== "ready") throw new Error(`${serial}: ${session.unusableReason}`);
      if (hub) {
        await hub.enable(driver.device(serial));
        for (let waited = 0; waited < 10_000 && !hub.serves(serial); waited += 50) await sleep(50);
        if (!hub.serves(serial)) throw new Error(`${serial}: the accessibility forwarder did not connect`);
      }
      // A long-running worker's frame path is warm (its frame thread started, its gRPC channel open): so is the bench's.
      await driver.device(serial).frame?.({ raw: true, rawFormat: "rgb", timeoutMs: 30_000 });
      sessions.push({ session, family, serial });
    }
    const truth = new Map(fleet.devices.map((d) => [d.serial, d.android] as const));
    opts.out(`farm bench settle: ${opts.devices} simulated emulators (emulator-grpc motion), families ${FAMILIES.join(", ")} with their scripted solutions, ${opts.episodesPerDevice} episode(s) per device per policy, trees by ${trees}`);
    for (const spec of specs) {
      observed = [];
      const trajectories: EpisodeTrajectory[] = [];
      let loopMs = 0;
      await Promise.all(
        sessions.map(async ({ session, family }, d) => {
          const loaded = loadTaskFile(path.join(REPO, "tasks/families", `${family}.family.yaml`), { apkDirs: [path.join(REPO, "tasks/apks")] });
          const policy = await policyFromSpec(`module:${path.join(REPO, "tasks/solutions", `${family}.policy.mjs`)}`);
          try {
            for (let k = 0; k < opts.episodesPerDevice; k++) {
              const index = d * opts.episodesPerDevice + k;
              const seed = opts.seed + index;
              const instance = taskInstanceFor(loaded, { campaignId: "bench-settle", index, seed });
              const t = await session.runEpisode({ seed, index, policy, settle: formatSettleSpec(spec), ...(instance ? { instance } : {}), limits: { maxEpisodeSteps: 15 } });
              trajectories.push(t);
              loopMs += t.steps.at(-1)?.timeOffsetMs ?? 0;
              if (session.state !== "ready") throw new Error(`${session.unusableReason}`);
            }
          } finally {
            await policy.close();
          }
        }),
      );
      const steps = trajectories.reduce((a, t) => a + t.steps.length, 0);
      const stale = staleObservations(observed, (serial) => truth.get(serial)?.settleHistory() ?? []);
      const settles = observed.filter((o) => o.settleMs !== undefined).map((o) => o.settleMs!).sort((a, b) => a - b);
      const scored = trajectories.filter((t) => t.success !== undefined);
      const line: SettleLine = {
        settle: opts.policies[lines.length]!,
        steps,
        stepsPerDeviceHour: loopMs > 0 ? steps / (loopMs / 3_600_000) : 0,
        stale,
        p50: quantile(settles, 0.5),
        p99: quantile(settles, 0.99),
        successRate: scored.length ? scored.reduce((a, t) => a + t.success!, 0) / trajectories.length : 0,
        capped: observed.filter((o) => o.capped).length,
      };
      lines.push(line);
      opts.out(formatSettleLine(line));
    }
    return lines;
  } finally {
    for (const s of sessions) await s.session.close().catch(() => undefined);
    await driver.close();
    await hub?.close();
    await fleet.close();
    await adb.close();
  }
}

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const devices = intOpt(opts, "devices", 4);
    const episodesPerDevice = intOpt(opts, "episodes-per-device", 2);
    const seed = intOpt(opts, "seed", 1, 0);
    const policies = typeof opts.policies === "string" ? opts.policies.split(",").map((p) => p.trim()) : DEFAULT_POLICIES;
    const out = (line: string) => process.stdout.write(`${line}\n`);
    const trees = opts.trees === undefined ? "forwarder" : opts.trees;
    if (trees !== "forwarder" && trees !== "uiautomator") throw new Error(`--trees must be forwarder or uiautomator, got ${String(trees)}`);
    await runSettleBench({ devices, episodesPerDevice, policies, seed, trees, out });
  },
};
