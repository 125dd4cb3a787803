/**
 * The supervisor against the simulated `emulator` executable and a real adb server: launch and boot
 * (gRPC getStatus), relaunch after SIGKILL (exited), after SIGSTOP (hung: health checks time out) and
 * after a boot that takes too long (boot_timeout), clean shutdown, and no orphan when the worker
 * process itself is SIGKILLed.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { createLogger } from "@farm/log";
import { adbServerDevices, startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { parseDiscovery } from "@farm/emulator-grpc";
import { createAvd } from "@farm/simulator";
import { EmulatorSupervisor, type RelaunchEvent } from "@farm/emulator-launcher";
import { emulatorArgs, relaunchDelayMs } from "@farm/emulator-launcher/testing";

const EMULATOR = path.resolve(import.meta.dirname, "../../simulator/sdk/emulator/emulator");
let adb: LocalAdbServer;
let tmp: string;
let env: NodeJS.ProcessEnv;
const logger = createLogger({ service: "launcher-test", level: "silent" });

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "farm-launcher-"));
  env = { ANDROID_AVD_HOME: path.join(tmp, "avd-home"), XDG_RUNTIME_DIR: tmp };
  fs.mkdirSync(env.ANDROID_AVD_HOME!, { recursive: true });
  createAvd(env.ANDROID_AVD_HOME!, "Launch_Sim", { width: 360, height: 640 });
  adb = await startAdbServer();
});
after(async () => {
  await adb?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function until(what: string, ms: number, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The emulator's own pid, from the discovery file it wrote (grpc.port matches). */
function emulatorPid(grpcPort: number): number {
  const dir = path.join(tmp, "avd", "running");
  for (const f of fs.readdirSync(dir)) {
    const info = parseDiscovery(fs.readFileSync(path.join(dir, f), "utf8"));
    if (Number(info.get("grpc.port")) === grpcPort) return Number(/pid_(\d+)/.exec(f)![1]);
  }
  throw new Error(`no discovery file for gRPC port ${grpcPort}`);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test("backoff doubles and is capped; the command line is a real emulator's", () => {
  assert.deepEqual([1, 2, 3, 4, 10].map((n) => relaunchDelayMs(n, 1000, 5000)), [1000, 2000, 4000, 5000, 5000]);
  const args = emulatorArgs({ avd: "Pixel", ports: { console: 5556, adb: 5557, grpc: 8556 }, snapshot: "clean" });
  assert.deepEqual(args.slice(0, 6), ["-avd", "Pixel", "-ports", "5556,5557", "-grpc", "8556"]);
  for (const f of ["-no-window", "-read-only", "-no-snapshot-save"]) assert.ok(args.includes(f), f);
  assert.deepEqual(args.slice(-2), ["-snapshot", "clean"]);
  assert.throws(() => emulatorArgs({ avd: "a b;rm", ports: { console: 5556, adb: 5557, grpc: 8556 } }), /avd name/);
});

test("launches N, adb lists them, a SIGKILLed one and a hung one are relaunched, stop leaves nothing", async () => {
  const relaunches: RelaunchEvent[] = [];
  const sup = new EmulatorSupervisor(
    { count: 2, avd: "Launch_Sim", executable: EMULATOR, adbPort: adb.port, env, basePort: 5700, healthIntervalMs: 300, healthTimeoutMs: 500, hungAfterFailures: 2, backoffBaseMs: 100, stopGraceMs: 3000 },
    { logger, onRelaunch: (e) => relaunches.push(e) },
  );
  let pids: number[] = [];
  try {
    sup.start();
    const serials = await sup.whenAllRunning(60_000);
    assert.equal(serials.length, 2);
    await until("adb lists both", 20_000, async () => {
      const devs = await adbServerDevices(adb.port);
      return serials.every((s) => devs.get(s) === "device");
    });
    const ports = serials.map((s) => Number(s.slice("emulator-".length)));
    const [pidA, pidB] = ports.map((c) => emulatorPid(c + 3000)) as [number, number];
    process.kill(pidA, "SIGKILL");
    process.kill(pidB, "SIGSTOP");
    await until("both relaunched", 60_000, () => relaunches.length >= 2);
    await sup.whenAllRunning(60_000);
    assert.deepEqual(relaunches.map((r) => `${r.serial}:${r.cause}`).sort(), [`${serials[0]}:exited`, `${serials[1]}:hung`].sort());
    assert.deepEqual(Object.keys(sup.states()).sort(), [...serials].sort(), "relaunched on the same ports");
    assert.ok(!alive(pidB), "the hung emulator was killed");
    pids = ports.map((c) => emulatorPid(c + 3000));
  } finally {
    await sup.close();
  }
  for (const pid of pids) assert.ok(!alive(pid), `emulator ${pid} is gone after stop`);
});

test("an emulator that does not boot in time is relaunched (boot_timeout)", async () => {
  const relaunches: RelaunchEvent[] = [];
  const sup = new EmulatorSupervisor(
    // emulator-adb profile: a 25 s cold boot, far over the 1.5 s allowed here.
    { count: 1, avd: "Launch_Sim", executable: EMULATOR, adbPort: adb.port, env: { ...env, FARM_EMULATOR_PROFILE: "emulator-adb" }, basePort: 5740, bootTimeoutMs: 1500, backoffBaseMs: 100, backoffMaxMs: 200, stopGraceMs: 2000 },
    { logger, onRelaunch: (e) => relaunches.push(e) },
  );
  try {
    sup.start();
    await until("a boot_timeout relaunch", 30_000, () => relaunches.length >= 2);
    assert.equal(relaunches[0]!.cause, "boot_timeout");
    assert.ok(relaunches[1]!.failures > relaunches[0]!.failures, "consecutive failures grow (backoff)");
  } finally {
    await sup.close();
  }
});

test("a worker killed with SIGKILL leaves no emulator behind", async () => {
  const script = `
    import { EmulatorSupervisor } from ${JSON.stringify(path.resolve(import.meta.dirname, "../src/index.ts"))};
    import { createLogger } from "@farm/log";
    const sup = new EmulatorSupervisor({ count: 1, avd: "Launch_Sim", executable: ${JSON.stringify(EMULATOR)}, adbPort: ${adb.port}, env: ${JSON.stringify(env)}, basePort: 5760, stopGraceMs: 2000 }, { logger: createLogger({ service: "t", level: "silent" }) });
    sup.start();
    const s = await sup.whenAllRunning(60000);
    console.log(s[0]);
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: path.resolve(import.meta.dirname, ".."), stdio: ["ignore", "pipe", "inherit"] });
  const serial = await new Promise<string>((resolve, reject) => {
    child.stdout.once("data", (d: Buffer) => resolve(d.toString().trim()));
    child.once("exit", (c) => reject(new Error(`child exited ${c}`)));
  });
  const pid = emulatorPid(Number(serial.slice("emulator-".length)) + 3000);
  assert.ok(alive(pid));
  child.kill("SIGKILL");
  await until(`emulator ${pid} gone after its worker died`, 20_000, () => !alive(pid));
});
