/**
 * `farm bench a11y [--samples N] [--instant-samples N]`: what reading the screen as a tree costs, on one
 * simulated emulator (in a child process, as real emulators are) at the `emulator-grpc` profile and at
 * `instant`: `Device.screenTree` from `uiautomator dump /dev/tty` over exec-out (wall time per tree), and
 * from the accessibility forwarder when the simulated device has it (the driver's A11yForwarderHub is
 * enabled on it and given 3 s to connect; otherwise `na`). Worker CPU per tree is this process's own CPU
 * (process.cpuUsage) over the reads: getting and parsing one tree (the last line's figure is the `instant` run's,
 * where a read is all work and no wait: see lastLine). The screen is the launcher with every
 * simulated APK installed. `instant` runs first, so the code is warm for both; each source is also read a
 * quarter of its samples (2–50) first, not measured. The forest, being cheap, is read `--instant-samples`
 * times at both profiles.
 * Last lines: the same figures for `instant`, then for `emulator-grpc`:
 * `nodes=<n> uiautomator_p50_ms=<a> forest_p50_ms=<b|na> worker_cpu_us_per_tree=<c>`.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { A11yForwarderHub, AdbDriver, isScreenTree, type AdbDevice } from "@farm/adb";
import { startAdbServer } from "@farm/local-services";
import { sleep } from "@farm/time";
import { intOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { startSimChild } from "./sim-child.ts";
import { fmtMs, latencyTable, quantiles, type LatencyRow } from "./stats.ts";

const APKS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../tasks/apks");
/** How long a forwarder gets to connect after the broadcasts before the forest path counts as absent. */
const FORWARDER_CONNECT_MS = 3000;

interface SourceFigures {
  q: ReturnType<typeof quantiles>;
  errors: number;
  cpuUsPerTree: number;
  nodes: number;
}

interface ProfileFigures {
  profile: string;
  uiautomator: SourceFigures;
  forest?: SourceFigures;
}

async function measure(dev: AdbDevice, source: "uiautomator" | "forwarder", samples: number): Promise<SourceFigures> {
  const ms: number[] = [];
  let errors = 0;
  let nodes = 0;
  let lastError = "";
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    const t = await dev.screenTree({ source, timeoutMs: 30_000 });
    if (isScreenTree(t)) {
      ms.push(performance.now() - t0);
      nodes = t.nodeCount;
    } else {
      errors++;
      lastError = t.message;
    }
  }
  const cpu = process.cpuUsage(cpu0);
  if (ms.length === 0) throw new Error(`every ${source} read failed; last: ${lastError}`);
  return { q: quantiles(ms), errors, cpuUsPerTree: (cpu.user + cpu.system) / samples, nodes };
}

/** Reads before measuring, so the figures are a long-running worker's (connections open, hot paths compiled). */
const warmupFor = (samples: number): number => Math.min(50, Math.max(2, Math.floor(samples / 4)));

async function runProfile(profile: string, samples: number, forestSamples: number): Promise<ProfileFigures> {
  const adb = await startAdbServer();
  const sim = await startSimChild(1, adb.port, profile);
  const hub = new A11yForwarderHub();
  const driver = new AdbDriver({ port: adb.port, a11y: { forwarder: hub } });
  try {
    const dev = driver.device(sim.serials[0]!);
    const boot = await dev.waitBootComplete(30_000);
    if (boot.status !== "ok") throw new Error(`device did not boot: ${boot.message}`);
    for (const apk of fs.readdirSync(APKS).filter((f) => f.endsWith(".apk"))) {
      const r = await dev.execute({ timeoutSec: 60, cmd: { command: "install_apk", location: { kind: "filesystem", path: path.join(APKS, apk), declaredPath: `apks/${apk}` } } });
      if (r.status !== "ok") throw new Error(`install ${apk}: ${r.message}`);
    }
    await measure(dev, "uiautomator", warmupFor(samples));
    const uiautomator = await measure(dev, "uiautomator", samples);
    await hub.enable(dev);
    for (let waited = 0; waited < FORWARDER_CONNECT_MS && !hub.serves(dev.serial); waited += 50) await sleep(50);
    const forest = hub.serves(dev.serial) ? (await measure(dev, "forwarder", warmupFor(forestSamples)), await measure(dev, "forwarder", forestSamples)) : undefined;
    return { profile, uiautomator, ...(forest ? { forest } : {}) };
  } finally {
    await driver.close();
    await hub.close();
    await sim.close();
    await adb.close();
  }
}

/**
 * `cpuUsPerTree`: the figure that stands for the farm's own work per tree. A read's work does not depend on
 * how long the device takes; at an emulator's pace a uiautomator read waits ~0.4 s, over which the process's
 * background (gRPC keepalives, the hub's streams, timers) would be counted too, so the last line takes the
 * work from the `instant` run (all work, no wait) and the profile's own wall times.
 */
function lastLine(f: ProfileFigures, cpuUsPerTree: number): string {
  return `nodes=${f.uiautomator.nodes} uiautomator_p50_ms=${fmtMs(f.uiautomator.q.p50)} forest_p50_ms=${f.forest ? fmtMs(f.forest.q.p50) : "na"} worker_cpu_us_per_tree=${cpuUsPerTree.toFixed(1)}`;
}

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const samples = intOpt(opts, "samples", 20);
    const instantSamples = intOpt(opts, "instant-samples", 500);
    const instant = await runProfile("instant", instantSamples, instantSamples);
    const grpc = await runProfile("emulator-grpc", samples, instantSamples);
    console.log("a11y: Device.screenTree on one simulated emulator (launcher, every simulated APK installed), warm");
    const rows: LatencyRow[] = [];
    for (const f of [grpc, instant]) {
      rows.push({ name: `${f.profile}: uiautomator dump (exec-out)`, q: f.uiautomator.q, errors: f.uiautomator.errors });
      if (f.forest) rows.push({ name: `${f.profile}: forwarder forest (Bidi)`, q: f.forest.q, errors: f.forest.errors });
    }
    for (const line of latencyTable("source", 44, rows)) console.log(line);
    for (const f of [grpc, instant]) {
      const cpu = [`uiautomator ${f.uiautomator.cpuUsPerTree.toFixed(1)} µs`, f.forest ? `forest ${f.forest.cpuUsPerTree.toFixed(1)} µs` : "forest na (no forwarder on this device)"];
      console.log(`${f.profile}: worker CPU per tree (get + parse${f === grpc ? ", and the process's background over each read's wait" : ""}): ${cpu.join(", ")}`);
    }
    const work = instant.uiautomator.cpuUsPerTree;
    console.log(`instant: ${lastLine(instant, work)}`);
    console.log(lastLine(grpc, work));
  },
};
