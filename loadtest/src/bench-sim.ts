/**
 * `farm bench sim`: what N simulated emulators cost in one process, and how fast they answer
 * through the real adb server while all N are registered.
 *   memory: RSS and JS heap of this process (after GC) before starting N devices, right after they
 *     are online ("idle"), and after every device has served the echo load and one `framebuffer:`
 *     ("used", the reported figure), divided by N. The adb server is a separate process, not counted.
 *   echo:   adbkit `shell('echo hi')` + read all (new server connection and `shell:` stream per call),
 *     round-robin over the devices, one call at a time; then the same with every device busy at
 *     once (one call in flight per device) for the loaded figure.
 *   restart: the adb server is restarted; time until every device is listed as `device` again.
 * Options: --devices N (default 64), --calls N (sequential samples, default 1000), --warmup N
 * (default 50), --rounds N (concurrent rounds, default 10), --profile <latency profile, default instant>.
 * Last line: `devices=N rss_mb_per_device=<x> echo_p50_ms=<y> echo_p99_ms=<z>` (sequential figures).
 */
import v8 from "node:v8";
import vm from "node:vm";
import { createAdbClient, readAll, type AdbClient } from "@farm/adb";
import { startAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { intOpt, profileOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { fmtMs, latencyTable, quantiles } from "./stats.ts";

/** A callable gc() even without --expose-gc, so memory figures are not inflated by garbage. */
function gcFunction(): () => void {
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
}

async function settledMemory(gc: () => void): Promise<{ rss: number; heap: number }> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 50));
  }
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed };
}

async function echoOnce(client: AdbClient, serial: string): Promise<number> {
  const t0 = performance.now();
  const out = await readAll(await client.getDevice(serial).shell("echo hi"));
  const dt = performance.now() - t0;
  if (out.toString() !== "hi\n") throw new Error(`${serial}: echo answered ${JSON.stringify(out.toString())}`);
  return dt;
}

const MB = 1024 * 1024;

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const count = intOpt(opts, "devices", 64);
    const calls = intOpt(opts, "calls", 1000);
    const warmup = intOpt(opts, "warmup", 50);
    const rounds = intOpt(opts, "rounds", 10);
    const profile = profileOpt(opts);
    const gc = gcFunction();
    const adb = await startAdbServer();
    try {
      const client = createAdbClient({ host: "127.0.0.1", port: adb.port });
      await client.listDevices(); // load adbkit's code before the baseline
      const before = await settledMemory(gc);
      const t0 = performance.now();
      const fleet = await startSimulatedDevices({ adbPort: adb.port, count, latencyProfile: profile });
      const startMs = performance.now() - t0;
      try {
        const serials = fleet.devices.map((d) => d.serial);
        const listed = new Set((await client.listDevices()).filter((d) => d.type === "device").map((d) => d.id));
        const missing = serials.filter((s) => !listed.has(s));
        if (missing.length) throw new Error(`not online at the adb server: ${missing.join(", ")}`);
        const after = await settledMemory(gc);

        for (let i = 0; i < warmup; i++) await echoOnce(client, serials[i % serials.length]!);
        const sequential: number[] = [];
        for (let i = 0; i < calls; i++) sequential.push(await echoOnce(client, serials[i % serials.length]!));
        const loaded: number[] = [];
        for (let r = 0; r < rounds; r++) loaded.push(...(await Promise.all(serials.map((s) => echoOnce(client, s)))));
        for (const s of serials) await readAll(await client.getDevice(s).framebuffer("raw"));
        const used = await settledMemory(gc);

        const stoppedAt = performance.now();
        await adb.restart();
        const answeredAt = performance.now();
        for (;;) {
          const online = await client.listDevices().then((l) => l.filter((d) => d.type === "device").length, () => 0);
          if (online >= count) break;
          if (performance.now() - answeredAt > 30_000) throw new Error(`only ${online}/${count} devices back 30 s after an adb server restart`);
          await new Promise((r) => setTimeout(r, 10));
        }
        const backMs = performance.now() - answeredAt;
        const backFromStopMs = performance.now() - stoppedAt;
        const seq = quantiles(sequential);
        const con = quantiles(loaded);
        const per = (a: { rss: number; heap: number }) => ({ rss: (a.rss - before.rss) / count / MB, heap: (a.heap - before.heap) / count / MB });
        const idlePer = per(after);
        const usedPer = per(used);
        const rssPer = usedPer.rss;

        console.log(`${count} simulated emulators in one process (pid ${process.pid}), latency profile ${profile}, private adb server on port ${adb.port}; started and online in ${startMs.toFixed(0)} ms`);
        console.log(`memory (MB)  rss: before ${(before.rss / MB).toFixed(1)}, idle ${(after.rss / MB).toFixed(1)}, used ${(used.rss / MB).toFixed(1)};  heap: before ${(before.heap / MB).toFixed(1)}, idle ${(after.heap / MB).toFixed(1)}, used ${(used.heap / MB).toFixed(1)}`);
        console.log(`per device: idle rss ${idlePer.rss.toFixed(3)} MB heap ${idlePer.heap.toFixed(3)} MB; used rss ${usedPer.rss.toFixed(3)} MB heap ${usedPer.heap.toFixed(3)} MB (adb server process not counted)`);
        const table = latencyTable("adbkit shell('echo hi') round trip", 52, [
          { name: "sequential, round-robin over devices", q: seq },
          { name: `all ${count} devices at once (${rounds} rounds)`, q: con },
        ]);
        for (const line of table) console.log(line);
        console.log(`adb server restart: all ${count} devices back ${backMs.toFixed(0)} ms after the new server answered (${backFromStopMs.toFixed(0)} ms after the old one was stopped)`);
        console.log(`devices=${count} rss_mb_per_device=${rssPer.toFixed(3)} echo_p50_ms=${fmtMs(seq.p50)} echo_p99_ms=${fmtMs(seq.p99)}`);
      } finally {
        await fleet.close();
      }
    } finally {
      await adb.stop();
    }
  },
};
