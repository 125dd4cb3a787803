/**
 * `farm bench frames [--screen 1080x1920] [--devices 2] [--seconds 5] [--encoding png] [--transport grpc|adb] [--shared-frames true|false]`: frames recorded
 * per second by one worker process, today's path against the new one, in one run on the same devices:
 *   old: adbkit `framebuffer:` read with chunks collected and concatenated, copied into a new RGBA array,
 *        converted to RGB in JavaScript and PNG-encoded with node:zlib on the event loop (the runner's
 *        code before issue 10, reproduced here so both sides run side by side);
 *   new: the driver's `Device.frame()`: the capture (the emulator's gRPC `getScreenshot(RGB888)`, the pixels
 *        through shared memory (the MMAP transport; `--shared-frames false`: in the answer); with
 *        `--transport adb` the raw framebuffer read into one preallocated buffer) and the encode (libvips
 *        through sharp) run in the driver's frame threads, off the event loop; the episode's FrameRecorder
 *        collects the encodings while the next frame is taken.
 * `--devices` devices record frames back to back (each: take, encode); one more device runs taps all along,
 * and its tap latency is reported for each phase (no frames / old / new): the step latency seen while
 * frames are encoded; beside it, how late the event loop ran (work on the loop delays every device's step; a
 * busy machine only slows the tap's round trip). Worker CPU per frame is this process's CPU (all threads) over the frames; the
 * simulated emulators run in a child process.
 * Last line: `screen=WxH old_frames_s=<a> new_frames_s=<b> speedup=<b/a> new_worker_cpu_ms_per_frame=<c>`.
 */
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { AdbDriver, createAdbClient, readAll, type Device } from "@farm/adb";
import { DeviceSession } from "@farm/episode";
import { FrameRecorder, parseFrameSpec, formatFrameSpec, type FrameSpec } from "@farm/frames";
import { startAdbServer } from "@farm/local-services";
import { encodeRgbPng } from "@farm/png";
import { loadTaskFile } from "@farm/task";
import { intOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { startSimChild } from "./sim-child.ts";
import { latencyTable, quantiles, type Quantiles } from "./stats.ts";
import { sleep } from "@farm/time";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

function screenOpt(opts: BenchOptions): { width: number; height: number } {
  const v = typeof opts.screen === "string" ? opts.screen : "1080x1920";
  const m = /^(\d{2,5})x(\d{2,5})$/.exec(v);
  if (!m) throw new Error(`--screen must look like 1080x1920, got ${v}`);
  return { width: Number(m[1]), height: Number(m[2]) };
}

function specOpt(opts: BenchOptions): FrameSpec {
  const s = parseFrameSpec(typeof opts.encoding === "string" ? opts.encoding : "png");
  if (typeof s === "string") throw new Error(`--encoding: ${s}`);
  return s;
}

/** Today's frame path before issue 10, step by step as the runner and driver did it. */
async function oldFrame(client: ReturnType<typeof createAdbClient>, serial: string): Promise<number> {
  const fb = await client.getDevice(serial).framebuffer("raw");
  const data = await readAll(fb);
  const { width, height } = fb.meta as unknown as { width: number; height: number };
  const rgba = new Uint8Array(width * height * 4);
  rgba.set(data.subarray(0, width * height * 4));
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0, j = 0; j < rgb.length; i += 4, j += 3) {
    rgb[j] = rgba[i]!;
    rgb[j + 1] = rgba[i + 1]!;
    rgb[j + 2] = rgba[i + 2]!;
  }
  return encodeRgbPng(width, height, rgb).byteLength;
}

interface Phase {
  frames: number;
  seconds: number;
  cpuMs: number;
  bytes: number;
  taps: Quantiles;
  errors: number;
  /** How late the event loop ran its callbacks meanwhile (ms): work on the loop shows here, busy cores do not. */
  loopDelay: { p50: number; p99: number; max: number };
}

/** Runs `record` back to back on every frame device for `seconds`, with taps on the probe device all along. */
async function phase(seconds: number, frameDevices: string[], probe: Device, record: (serial: string) => Promise<number>, finish: () => Promise<number> = async () => 0): Promise<Phase> {
  const stopAt = performance.now() + seconds * 1000;
  const ch = await probe.openActionChannel();
  const taps: number[] = [];
  let errors = 0;
  const tapping = (async () => {
    let i = 0;
    while (performance.now() < stopAt) {
      const t0 = performance.now();
      const r = await ch.tap(50 + (i++ % 200), 300);
      if (r.status === "ok") taps.push(performance.now() - t0);
      else errors++;
      // a step rate of ~100/s, as a policy would drive it
      await sleep(10);
    }
  })();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let frames = 0;
  let bytes = 0;
  await Promise.all(
    frameDevices.map(async (serial) => {
      while (performance.now() < stopAt) {
        try {
          bytes += await record(serial);
          frames++;
        } catch {
          errors++;
        }
      }
    }),
  );
  bytes += await finish();
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  delay.disable();
  await tapping;
  await ch.close();
  // The histogram is in ns and includes the 1 ms sampling interval itself.
  const late = (ns: number) => Math.max(0, ns / 1e6 - 1);
  const loopDelay = { p50: late(delay.percentile(50)), p99: late(delay.percentile(99)), max: late(delay.max) };
  return { frames, seconds: wall, cpuMs: (cpu.user + cpu.system) / 1000, bytes, taps: quantiles(taps), errors, loopDelay };
}

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const screen = screenOpt(opts);
    const devices = intOpt(opts, "devices", 2);
    const seconds = intOpt(opts, "seconds", 5);
    const spec = specOpt(opts);
    const out = (line: string) => process.stdout.write(`${line}\n`);
    const adb = await startAdbServer();
    const sim = await startSimChild(devices + 1, adb.port, "instant", ["--screen", `${screen.width}x${screen.height}`]);
    const transport = typeof opts.transport === "string" ? opts.transport : "grpc";
    if (transport !== "grpc" && transport !== "adb") throw new Error(`--transport must be grpc or adb, got ${transport}`);
    const probeDriver = new AdbDriver({ port: adb.port });
    const shared = opts["shared-frames"] ?? "true";
    if (shared !== "true" && shared !== "false") throw new Error(`--shared-frames must be true or false, got ${String(shared)}`);
    const driver = new AdbDriver({ port: adb.port, grpc: transport === "grpc" ? { mode: "config", endpoints: sim.grpcEndpoints, sharedFrames: shared === "true" } : { mode: "off" } });
    const client = createAdbClient({ host: "127.0.0.1", port: adb.port });
    try {
      const serials = sim.serials.slice(0, devices);
      const probe = probeDriver.device(sim.serials[devices]!);
      // Classic 2048 on every frame device, so the frames are a real app screen.
      const task = loadTaskFile(path.join(REPO, "tasks/classic_2048.textproto"));
      for (const serial of serials) {
        const s = await DeviceSession.open({ device: driver.device(serial), task, config: { settleMs: 20, apkDirs: [path.join(REPO, "tasks/apks")] } });
        if (s.state !== "ready") throw new Error(`device ${serial} could not be set up: ${s.unusableReason}`);
        await s.close();
      }
      await probe.waitBootComplete(10_000);

      const idle = await phase(Math.min(2, seconds), [], probe, async () => 0);
      const old = await phase(seconds, serials, probe, (serial) => oldFrame(client, serial));
      let rec = new FrameRecorder(spec);
      let recBytes = 0;
      const fresh = await phase(
        seconds,
        serials,
        probe,
        async (serial) => {
          // What the runner does for a recorded step: take the frame, hand its encoding to the episode's recorder, go on.
          const f = await driver.device(serial).frame({ raw: false, encode: spec, timeoutMs: 10_000 });
          if (!("width" in f)) throw new Error(f.message);
          await rec.track(0, f.encoded!);
          if (rec.stats.submitted >= 64) {
            // one recorder per episode in the farm; here one per 64 frames keeps memory flat
            const done = rec;
            rec = new FrameRecorder(spec);
            recBytes += await done.finish().then(() => done.stats.bytes);
          }
          return 0;
        },
        async () => {
          await rec.finish();
          return recBytes + rec.stats.bytes;
        },
      );

      const rate = (p: Phase) => p.frames / p.seconds;
      const ep = driver.device(serials[0]!).grpcEndpoint();
      const via = ep ? `gRPC getScreenshot (${driver.grpc.sharesFrames(ep) ? "pixels through shared memory" : "pixels in the answer"})` : "adb framebuffer";
      out(`frames: ${devices} devices at ${screen.width}x${screen.height} recording back to back for ${seconds} s per path; new path: ${via} + ${formatFrameSpec(spec)} in frame threads; tap latency on one more device (a tap every 10 ms)`);
      out(`path  frames  frames/s  worker_cpu_ms/frame  kB/frame`);
      for (const [name, p] of [["old", old], ["new", fresh]] as const) {
        out(`${name.padEnd(5)} ${String(p.frames).padStart(6)} ${rate(p).toFixed(1).padStart(9)} ${(p.cpuMs / Math.max(1, p.frames)).toFixed(1).padStart(20)} ${(p.bytes / 1024 / Math.max(1, p.frames)).toFixed(1).padStart(9)}`);
      }
      for (const line of latencyTable("tap latency while", 24, [
        { name: "no frames", q: idle.taps, errors: idle.errors },
        { name: "old path recording", q: old.taps, errors: old.errors },
        { name: "new path recording", q: fresh.taps, errors: fresh.errors },
      ])) out(line);
      out(`event loop delay while     p50 ms    p99 ms    max ms`);
      for (const [name, p] of [["no frames", idle], ["old path recording", old], ["new path recording", fresh]] as const) {
        out(`${name.padEnd(24)} ${[p.loopDelay.p50, p.loopDelay.p99, p.loopDelay.max].map((x) => x.toFixed(3).padStart(9)).join(" ")}`);
      }
      const speedup = rate(fresh) / rate(old);
      const cpu = fresh.cpuMs / Math.max(1, fresh.frames);
      out(`screen=${screen.width}x${screen.height} old_frames_s=${rate(old).toFixed(1)} new_frames_s=${rate(fresh).toFixed(1)} speedup=${Number.isFinite(speedup) ? speedup.toFixed(1) : "n/a"} new_worker_cpu_ms_per_frame=${cpu.toFixed(1)}`);
    } finally {
      await driver.close();
      await probeDriver.close();
      await sim.close();
      await adb.close();
    }
  },
};
