/**
 * `farm bench adb`: round-trip latency of the ways to drive a device, against the same simulated
 * device and the same private adb server, measured in one run:
 *   (g) the driver's gRPC action channel: `touchMove` as one event on the device's open `streamInputEvent`
 *       call (what an action costs the caller: the event handed to the connection; the stream has no
 *       per-event answer, so this is not a round trip),
 *   (g1) the emulator's unary `sendTouch` over the same lean client (a full round trip; the path of an
 *       emulator without streamInputEvent),
 *   (g0) the same `sendTouch` through a grpc-js client (for comparison; not the farm's path),
 *   (a) the driver's action channel (one persistent `shell:` stream; `touchMove` per sample),
 *   (b) adbkit with a new server connection and `shell:` stream per call (`shell('echo hi')` + read all),
 *   (c) the adb CLI spawned per call (`adb -P <port> -s <serial> shell echo hi`), AndroidEnv's way.
 * Options: --samples N (channel and stream; the CLI gets N/10, at least 50), --warmup N, --profile
 * <simulator latency profile, default instant>, --sim child|in-process (default child: the device runs
 * in its own process, as an emulator does; in-process shares this process's event loop and CPU).
 * The gRPC path needs the device in a child (`farm sim` serves gRPC per device); with --sim in-process it is skipped.
 * Last line: `grpc_p50_ms=<x> channel_p50_ms=<y> cli_p50_ms=<z> channel_over_grpc=<y/x> cli_over_grpc=<z/x>`.
 */
import { execFile } from "node:child_process";
import { AdbDriver, GrpcActionChannel, createAdbClient, emulatorCalls, readAll } from "@farm/adb";
import { startAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { startSimChild } from "./sim-child.ts";
import { closeAll, openControllers, touchRoundTrips, warmUp } from "./sim-grpc-load.ts";
import { intOpt, profileOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { fmtMs, latencyTable, quantiles, type Quantiles } from "./stats.ts";
import { adbBin } from "./settings.ts";

/** Quantiles of the successful samples, and how many failed. */
interface Stats extends Quantiles {
  errors: number;
}

async function measure(n: number, warmup: number, once: () => Promise<boolean>): Promise<Stats> {
  for (let i = 0; i < warmup; i++) await once();
  const samples: number[] = [];
  let errors = 0;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const ok = await once();
    const dt = performance.now() - t0;
    if (ok) samples.push(dt);
    else errors++;
  }
  return { ...quantiles(samples), errors };
}

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const samples = intOpt(opts, "samples", 3000);
    const cliSamples = Math.max(50, Math.floor(samples / 10));
    const warmup = intOpt(opts, "warmup", 100);
    const profile = profileOpt(opts);
    const simMode = typeof opts.sim === "string" ? opts.sim : "child";
    if (simMode !== "child" && simMode !== "in-process") throw new Error(`--sim must be child or in-process, got ${simMode}`);
    const adb = await startAdbServer();
    const sims =
      simMode === "child"
        ? await startSimChild(1, adb.port, profile).then((c) => ({ serial: c.serials[0], grpc: c.grpcEndpoints, close: () => c.close() }))
        : await startSimulatedDevices({ adbPort: adb.port, count: 1, seed: 1, latencyProfile: profile }).then((f) => ({ serial: f.devices[0]?.serial, grpc: {}, close: () => f.close() }));
    const driver = new AdbDriver({ port: adb.port });
    const grpcDriver = new AdbDriver({ port: adb.port, grpc: { mode: "config", endpoints: sims.grpc } });
    try {
      const serial = sims.serial;
      if (!serial) throw new Error("the simulator started no device");
      const dev = driver.device(serial);
      const boot = await dev.waitBootComplete(10_000);
      if (boot.status !== "ok") throw new Error(`device ${serial} did not come up: ${boot.message}`);

      let i = 0;
      let firstError = "";
      // (g) gRPC action channel
      const gch = await grpcDriver.device(serial).openActionChannel();
      const grpcOn = gch instanceof GrpcActionChannel;
      const g = grpcOn
        ? await measure(samples, warmup, async () => {
            const r = await gch.touchMove(100 + (i++ % 300), 200);
            if (r.status !== "ok" && !firstError) firstError = `grpc: ${r.status} ${r.message}`;
            return r.status === "ok";
          })
        : { ...quantiles([]), errors: 0 };
      if (grpcOn) await gch.touchUp(100, 200);
      await gch.close();

      // (g1) unary sendTouch over the lean client: a round trip per touch
      const ep = sims.grpc[serial as keyof typeof sims.grpc] as { address: string } | undefined;
      const g1 = grpcOn && ep
        ? await measure(samples, warmup, async () => {
            const r = await emulatorCalls.sendTouch(ep, { touches: [{ x: 100 + (i++ % 300), y: 200, identifier: 0, pressure: 1 }] }, 5000);
            if (!r.ok && !firstError) firstError = `grpc unary: ${r.err.code} ${r.err.details}`;
            return r.ok;
          })
        : { ...quantiles([]), errors: 0 };
      if (grpcOn && ep) await emulatorCalls.sendTouch(ep, { touches: [{ x: 100, y: 200, identifier: 0, pressure: 0 }] }, 5000);

      // (g0) the same sendTouch through a grpc-js client (what the transport used before its lean client), for comparison
      let g0: Stats = { ...quantiles([]), errors: 0 };
      if (grpcOn && ep) {
        const targets = openControllers([Number(ep.address.split(":").pop())]);
        try {
          await warmUp(targets);
          g0 = { ...quantiles(await touchRoundTrips(targets, samples, warmup)), errors: 0 };
        } finally {
          closeAll(targets);
        }
      }

      // (a) action channel
      const ch = await dev.openActionChannel();
      const a = await measure(samples, warmup, async () => {
        const r = await ch.touchMove(100 + (i++ % 300), 200);
        if (r.status !== "ok" && !firstError) firstError = `channel: ${r.status} ${r.message}`;
        return r.status === "ok";
      });
      await ch.touchUp(100, 200);
      await ch.close();

      // (b) adbkit, one server connection + shell stream per call
      const client = createAdbClient({ host: "127.0.0.1", port: adb.port });
      const dc = client.getDevice(serial);
      const b = await measure(samples, warmup, async () => {
        try {
          const s = await dc.shell("echo hi");
          const out = await readAll(s);
          return out.toString() === "hi\n";
        } catch (e) {
          if (!firstError) firstError = `stream: ${String(e)}`;
          return false;
        }
      });

      // (b2) the same through the driver's Device.shell (deadline, error mapping, metrics hook)
      const b2 = await measure(samples, warmup, async () => {
        const r = await dev.shell("echo hi", { timeoutMs: 5000 });
        return r.status === "ok" && r.stdout === "hi\n";
      });

      // (c) adb CLI per call
      const bin = adbBin();
      const c = await measure(cliSamples, Math.min(warmup, 10), () =>
        new Promise<boolean>((resolve) => {
          execFile(bin, ["-P", String(adb.port), "-s", serial, "shell", "echo", "hi"], (err, stdout) => {
            if (err && !firstError) firstError = `cli: ${err.message}`;
            resolve(!err && stdout.trim() === "hi");
          });
        }),
      );

      const rows: Array<[string, Stats]> = [
        ["(g) gRPC input stream (touchMove)", g],
        ["(g1) gRPC unary sendTouch, lean", g1],
        ["(g0) grpc-js client (sendTouch)", g0],
        ["(a) action channel (touchMove)", a],
        ["(b) adbkit stream per call (echo hi)", b],
        ["(b2) driver Device.shell (echo hi)", b2],
        ["(c) adb CLI per call (echo hi)", c],
      ];
      console.log(`adb round trips, 1 simulated device (${serial}, latency profile ${profile}, ${simMode === "child" ? "in a child process" : "in this process"}), private adb server on port ${adb.port}`);
      for (const line of latencyTable("path", 40, rows.map(([name, s]) => ({ name, q: s, errors: s.errors })))) console.log(line);
      if (firstError) console.log(`first error: ${firstError}`);
      const ratio = (x: number, y: number) => (Number.isFinite(x / y) ? (x / y).toFixed(1) : "n/a");
      console.log(`ratios (p50): stream/channel=${ratio(b.p50, a.p50)} cli/channel=${ratio(c.p50, a.p50)} cli/stream=${ratio(c.p50, b.p50)}; (p99): stream/channel=${ratio(b.p99, a.p99)} cli/channel=${ratio(c.p99, a.p99)}`);
      const goal = a.p50 <= 0.25 && c.p50 / a.p50 >= 30;
      console.log(`goal (channel p50 <= 0.25 ms and >= 30x faster than the CLI): ${goal ? "met" : "NOT met"}`);
      console.log(`stream_p50_ms=${fmtMs(b.p50)} cli_over_channel=${ratio(c.p50, a.p50)}${grpcOn ? "" : " (no gRPC endpoint: run with --sim child)"}`);
      const grpcGoal = g.p50 <= 0.15 && a.p50 / g.p50 >= 2;
      console.log(`gRPC: an action on the input stream costs the caller ${fmtMs(g.p50)} ms at p50 (no per-event answer); a unary sendTouch round trip ${fmtMs(g1.p50)} ms`);
      console.log(`grpc_unary_p50_ms=${fmtMs(g1.p50)} channel_over_grpc_unary=${ratio(a.p50, g1.p50)}`);
      console.log(`goal (gRPC p50 <= 0.15 ms and >= 2x faster than the action channel): ${grpcGoal ? "met" : "NOT met"}`);
      console.log(`grpc_p50_ms=${fmtMs(g.p50)} channel_p50_ms=${fmtMs(a.p50)} cli_p50_ms=${fmtMs(c.p50)} channel_over_grpc=${ratio(a.p50, g.p50)} cli_over_grpc=${ratio(c.p50, g.p50)}`);
    } finally {
      await driver.close();
      await grpcDriver.close();
      await sims.close();
      await adb.close();
    }
  },
};
