/**
 * `farm bench sim`: what N simulated emulators cost in one process, and how fast they answer
 * through the real adb server while all N are registered.
 *   memory: RSS and JS heap of this process (after GC) before starting N devices, right after they
 *     are online ("idle"), and after every device has served the echo load and one `framebuffer:`
 *     ("used", the reported figure), divided by N. The adb server is a separate process, not counted.
 *   echo:   adbkit `shell('echo hi')` + read all (new server connection and `shell:` stream per call),
 *     round-robin over the devices, one call at a time; then the same with every device busy at
 *     once (one call in flight per device) for the loaded figure.
 *   gRPC:   every device also serves the emulator's gRPC endpoint (startEmulatorGrpc; counted in
 *     the memory figures); one EmulatorController client per device: sendTouch and
 *     getScreenshot(RGBA8888) of the 360x640 devices, and getScreenshot of one extra 1080x1920
 *     device (started after the memory figures), sequential round trips, beside the adb figures of
 *     the same run: adbkit `shell('input tap …')` and `framebuffer:` (raw RGBA) on the same devices.
 *   restart: the adb server is restarted; time until every device is listed as `device` again.
 * Options: --devices N (default 64), --calls N (sequential samples, default 1000), --warmup N
 * (default 50), --rounds N (concurrent rounds, default 10), --shots N (screenshot samples per kind,
 * default 200), --grpc on|off (default on), --profile <latency profile, default instant>.
 * Last line: `devices=N rss_mb_per_device=<x> echo_p50_ms=<y> echo_p99_ms=<z>` (sequential
 * figures), then with gRPC ` grpc_touch_p50_ms=… grpc_touch_p99_ms=… grpc_shot360_p50_ms=…
 * grpc_shot360_p99_ms=… grpc_shot1080_p50_ms=… grpc_shot1080_p99_ms=… adb_tap_p50_ms=…
 * adb_fb360_p50_ms=…`.
 */
import v8 from "node:v8";
import vm from "node:vm";
import { createAdbClient, readAll, type AdbClient } from "@farm/adb";
import { startAdbServer } from "@farm/local-services";
import { SimDevice, startEmulatorGrpc, startSimulatedDevices, type EmulatorGrpcServer } from "@farm/simulator";
import { closeAll, openControllers, screenshotRoundTrips, touchRoundTrips, warmUp } from "./sim-grpc-load.ts";
import { intOpt, profileOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { fmtMs, latencyTable, quantiles } from "./stats.ts";
import { sleep } from "@farm/time";

/** A callable gc() even without --expose-gc, so memory figures are not inflated by garbage. */
function gcFunction(): () => void {
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
}

async function settledMemory(gc: () => void): Promise<{ rss: number; heap: number }> {
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(50);
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

async function adbTapOnce(client: AdbClient, serial: string): Promise<number> {
  const t0 = performance.now();
  await readAll(await client.getDevice(serial).shell("input tap 20 620"));
  return performance.now() - t0;
}

async function adbFramebufferOnce(client: AdbClient, serial: string, bytes: number): Promise<number> {
  const t0 = performance.now();
  const raw = await readAll(await client.getDevice(serial).framebuffer("raw"));
  const dt = performance.now() - t0;
  if (raw.length < bytes) throw new Error(`${serial}: framebuffer answered ${raw.length} bytes, expected at least ${bytes}`);
  return dt;
}

function grpcOpt(opts: BenchOptions): boolean {
  const v = opts["grpc"];
  if (v === undefined || v === true || v === "on") return true;
  if (v === "off") return false;
  throw new Error(`--grpc must be on or off, got ${String(v)}`);
}

const MB = 1024 * 1024;

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const count = intOpt(opts, "devices", 64);
    const calls = intOpt(opts, "calls", 1000);
    const warmup = intOpt(opts, "warmup", 50);
    const rounds = intOpt(opts, "rounds", 10);
    const profile = profileOpt(opts);
    const shots = intOpt(opts, "shots", 200);
    const withGrpc = grpcOpt(opts);
    const gc = gcFunction();
    const adb = await startAdbServer();
    try {
      const client = createAdbClient({ host: "127.0.0.1", port: adb.port });
      await client.listDevices(); // load adbkit's code before the baseline
      const before = await settledMemory(gc);
      const t0 = performance.now();
      const fleet = await startSimulatedDevices({ adbPort: adb.port, count, latencyProfile: profile });
      const grpcServers: EmulatorGrpcServer[] = withGrpc ? await Promise.all(fleet.devices.map((d) => startEmulatorGrpc(d))) : [];
      const startMs = performance.now() - t0;
      let big: SimDevice | undefined;
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
        const targets = openControllers(grpcServers.map((g) => g.port));
        let grpcFigures: { touch: number[]; shot360: number[]; shot1080: number[] } | undefined;
        try {
          if (withGrpc) {
            await warmUp(targets);
            await screenshotRoundTrips(targets, targets.length, 0, { width: 360, height: 640 });
          }
          const used = await settledMemory(gc);
          if (withGrpc) {
            const touch = await touchRoundTrips(targets, calls, warmup);
            const shot360 = await screenshotRoundTrips(targets, shots, Math.min(warmup, shots), { width: 360, height: 640 });
            big = await SimDevice.start({ adbPort: adb.port, screen: { width: 1080, height: 1920 }, latencyProfile: profile });
            const bigTarget = openControllers([(await startEmulatorGrpc(big)).port]);
            try {
              await warmUp(bigTarget);
              const shot1080 = await screenshotRoundTrips(bigTarget, shots, Math.min(10, shots), { width: 1080, height: 1920 });
              grpcFigures = { touch, shot360, shot1080 };
            } finally {
              closeAll(bigTarget);
            }
          }
          const adbTap: number[] = [];
          const adbFb: number[] = [];
          if (withGrpc) {
            for (let i = 0; i < warmup + calls; i++) {
              const dt = await adbTapOnce(client, serials[i % serials.length]!);
              if (i >= warmup) adbTap.push(dt);
            }
            for (let i = 0; i < Math.min(warmup, shots) + shots; i++) {
              const dt = await adbFramebufferOnce(client, serials[i % serials.length]!, 360 * 640 * 4);
              if (i >= Math.min(warmup, shots)) adbFb.push(dt);
            }
          }

          const stoppedAt = performance.now();
          await adb.restart();
          const answeredAt = performance.now();
          for (;;) {
            const online = await client.listDevices().then((l) => l.filter((d) => d.type === "device").length, () => 0);
            if (online >= count) break;
            if (performance.now() - answeredAt > 30_000) throw new Error(`only ${online}/${count} devices back 30 s after an adb server restart`);
            await sleep(10);
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
          let grpcTail = "";
          if (grpcFigures) {
            const touchQ = quantiles(grpcFigures.touch);
            const s360 = quantiles(grpcFigures.shot360);
            const s1080 = quantiles(grpcFigures.shot1080);
            const tapQ = quantiles(adbTap);
            const fbQ = quantiles(adbFb);
            const rows = latencyTable("round trip, sequential (gRPC: one client per device)", 52, [
              { name: "gRPC sendTouch (down or up)", q: touchQ },
              { name: "adb  shell('input tap') (adbkit)", q: tapQ },
              { name: "gRPC getScreenshot RGBA8888 360x640", q: s360 },
              { name: "adb  framebuffer: raw 360x640 (adbkit)", q: fbQ },
              { name: "gRPC getScreenshot RGBA8888 1080x1920 (1 device)", q: s1080 },
            ]);
            for (const line of rows) console.log(line);
            grpcTail = ` grpc_touch_p50_ms=${fmtMs(touchQ.p50)} grpc_touch_p99_ms=${fmtMs(touchQ.p99)} grpc_shot360_p50_ms=${fmtMs(s360.p50)} grpc_shot360_p99_ms=${fmtMs(s360.p99)} grpc_shot1080_p50_ms=${fmtMs(s1080.p50)} grpc_shot1080_p99_ms=${fmtMs(s1080.p99)} adb_tap_p50_ms=${fmtMs(tapQ.p50)} adb_fb360_p50_ms=${fmtMs(fbQ.p50)}`;
          }
          console.log(`adb server restart: all ${count} devices back ${backMs.toFixed(0)} ms after the new server answered (${backFromStopMs.toFixed(0)} ms after the old one was stopped)`);
          console.log(`devices=${count} rss_mb_per_device=${rssPer.toFixed(3)} echo_p50_ms=${fmtMs(seq.p50)} echo_p99_ms=${fmtMs(seq.p99)}${grpcTail}`);
        } finally {
          closeAll(targets);
        }
      } finally {
        await big?.close();
        await Promise.all(grpcServers.map((g) => g.close()));
        await fleet.close();
      }
    } finally {
      await adb.close();
    }
  },
};
