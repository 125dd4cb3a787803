/** `farm sim`: starts simulated emulators against an adb server, prints their ports, stops cleanly on SIGTERM. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { adbServerAnswers, startAdbServer } from "@farm/local-services";
import { parseDiscovery } from "@farm/simulator";
import { adbCli, eventually, freeConsoleRange, tempEnv, type TempEnv } from "@farm/simulator/testing";
import { REPO } from "./fixtures.ts";

const FARM = path.join(REPO, "services/cli/bin/farm.js");

/** Per device: `emulator-N console_port=N adb_port=N+1 [grpc_port=G]`. */
const DEVICE_LINE = /^(emulator-(\d+)) console_port=(\d+) adb_port=(\d+)(?: grpc_port=(\d+))?$/;

/** `farm sim …` with a private HOME / XDG_RUNTIME_DIR (console token, discovery files), removed on exit. */
function startFarmSim(args: string[], given?: TempEnv) {
  const t = given ?? tempEnv();
  const env = t.env;
  const child = spawn(process.execPath, [FARM, "sim", ...args], { stdio: ["ignore", "pipe", "pipe"], env });
  let out = "";
  let err = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr.on("data", (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | null>((r) => child.once("close", r));
  if (!given) void exited.then(() => t.cleanup());
  return { child, exited, out: () => out, err: () => err };
}

test("farm sim --devices 2 --adb-port P registers with the server on P and leaves it running", async () => {
  const adb = await startAdbServer();
  const sim = startFarmSim(["--devices", "2", "--adb-port", String(adb.port)]);
  try {
    assert.ok(await eventually(() => sim.out().includes("ready devices=2"), 20_000), sim.out() + sim.err());
    const lines = sim.out().trim().split("\n");
    assert.equal(lines[0], `adb_port=${adb.port} started_server=false`);
    const serials = lines.map((l) => DEVICE_LINE.exec(l)?.[1]).filter((s): s is string => s !== undefined);
    assert.equal(serials.length, 2);
    const listed = (await adbCli(adb.port, undefined, ["devices"])).stdout.toString();
    for (const s of serials) assert.match(listed, new RegExp(`^${s}\\tdevice$`, "m"));
    sim.child.kill("SIGTERM");
    assert.equal(await sim.exited, 0, sim.err());
    assert.match(sim.out(), /stopped\n$/);
    assert.ok(await adbServerAnswers(adb.port), "a server farm sim did not start must keep running");
    // adb lists a vanished emulator as offline for a few hundred ms, then drops the entry.
    const gone = await eventually(async () => {
      const after = (await adbCli(adb.port, undefined, ["devices"])).stdout.toString();
      return serials.every((s) => !after.includes(s));
    }, 3000);
    assert.ok(gone, "devices still listed after farm sim stopped");
  } finally {
    sim.child.kill("SIGKILL");
    await adb.close();
  }
});

test("farm sim without --adb-port starts a private server, and stops it on SIGINT", async () => {
  const sim = startFarmSim(["--devices", "1"]);
  try {
    assert.ok(await eventually(() => sim.out().includes("ready devices=1"), 20_000), sim.out() + sim.err());
    const port = Number(/^adb_port=(\d+) started_server=true$/m.exec(sim.out())?.[1]);
    assert.ok(port > 0);
    const serial = sim.out().split("\n").find((l) => l.startsWith("emulator-"))!.split(" ")[0]!;
    const echo = await adbCli(port, serial, ["shell", "echo", "ok"]);
    assert.equal(echo.stdout.toString(), "ok\n");
    sim.child.kill("SIGINT");
    assert.equal(await sim.exited, 0, sim.err());
    assert.equal(await adbServerAnswers(port), false);
  } finally {
    sim.child.kill("SIGKILL");
  }
});

test("farm sim --base-port: one line per device with its ports, discovery files that appear and vanish", async () => {
  const t = tempEnv();
  const adb = await startAdbServer();
  const base = await freeConsoleRange(2, 3000);
  const sim = startFarmSim(["--devices", "2", "--adb-port", String(adb.port), "--base-port", String(base), "--grpc-base-port", String(base + 3000)], t);
  try {
    assert.ok(await eventually(() => sim.out().includes("ready devices=2") || sim.child.exitCode !== null, 20_000), sim.out() + sim.err());
    const devices = sim.out().split("\n").filter((l) => l.startsWith("emulator-"));
    assert.deepEqual(devices, [
      `emulator-${base} console_port=${base} adb_port=${base + 1} grpc_port=${base + 3000}`,
      `emulator-${base + 2} console_port=${base + 2} adb_port=${base + 3} grpc_port=${base + 3001}`,
    ]);
    const listed = (await adbCli(adb.port, undefined, ["devices"])).stdout.toString();
    for (const p of [base, base + 2]) assert.match(listed, new RegExp(`^emulator-${p}\\tdevice$`, "m"));

    // The device that registers first takes the plain name (devices start concurrently); the other is named by its console port.
    const files = fs.readdirSync(t.runningDir).sort();
    assert.equal(files.length, 2, files.join(", "));
    assert.ok(files.includes(`pid_${sim.child.pid}.ini`), files.join(", "));
    const other = files.map((f) => new RegExp(`^pid_${sim.child.pid}_(\\d+)\\.ini$`).exec(f)).find((m) => m);
    assert.ok(other, files.join(", "));
    const otherPort = Number(other[1]);
    assert.ok(otherPort === base || otherPort === base + 2, files.join(", "));
    const plainPort = otherPort === base ? base + 2 : base;
    const first = parseDiscovery(fs.readFileSync(path.join(t.runningDir, `pid_${sim.child.pid}.ini`), "utf8"));
    assert.equal(first.get("port.serial"), String(plainPort));
    assert.equal(first.get("port.adb"), String(plainPort + 1));
    assert.equal(first.get("grpc.port"), String(base + 3000 + (plainPort - base) / 2));
    const second = parseDiscovery(fs.readFileSync(path.join(t.runningDir, other[0]), "utf8"));
    assert.equal(second.get("port.serial"), String(otherPort));

    sim.child.kill("SIGTERM");
    assert.equal(await sim.exited, 0, sim.err());
    assert.deepEqual(fs.readdirSync(t.runningDir), [], "discovery files must vanish when farm sim stops");
  } finally {
    sim.child.kill("SIGKILL");
    await adb.close();
    t.cleanup();
  }
});

test("farm sim refuses an odd --base-port before starting anything", async () => {
  const sim = startFarmSim(["--devices", "1", "--base-port", "5701"]);
  assert.equal(await sim.exited, 1);
  assert.match(sim.err(), /--base-port must be an even integer/);
});
