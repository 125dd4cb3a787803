/** `farm sim`: starts simulated emulators against an adb server, lists serials, stops cleanly on SIGTERM. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { adbServerAnswers, startAdbServer } from "@farm/local-services";
import { adbCli, eventually } from "./transport-helpers.ts";

const FARM = fileURLToPath(new URL("../../../services/cli/bin/farm.js", import.meta.url));

function startFarmSim(args: string[]) {
  const child = spawn(process.execPath, [FARM, "sim", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr.on("data", (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | null>((r) => child.once("close", r));
  return { child, exited, out: () => out, err: () => err };
}

test("farm sim --devices 2 --adb-port P registers with the server on P and leaves it running", async () => {
  const adb = await startAdbServer();
  const sim = startFarmSim(["--devices", "2", "--adb-port", String(adb.port)]);
  try {
    assert.ok(await eventually(() => sim.out().includes("ready devices=2"), 20_000), sim.out() + sim.err());
    const lines = sim.out().trim().split("\n");
    assert.equal(lines[0], `adb_port=${adb.port} started_server=false`);
    const serials = lines.filter((l) => /^emulator-\d+$/.test(l));
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
    await adb.stop();
  }
});

test("farm sim without --adb-port starts a private server, and stops it on SIGINT", async () => {
  const sim = startFarmSim(["--devices", "1"]);
  try {
    assert.ok(await eventually(() => sim.out().includes("ready devices=1"), 20_000), sim.out() + sim.err());
    const port = Number(/^adb_port=(\d+) started_server=true$/m.exec(sim.out())?.[1]);
    assert.ok(port > 0);
    const serial = sim.out().split("\n").find((l) => l.startsWith("emulator-"))!;
    const echo = await adbCli(port, serial, ["shell", "echo", "ok"]);
    assert.equal(echo.stdout.toString(), "ok\n");
    sim.child.kill("SIGINT");
    assert.equal(await sim.exited, 0, sim.err());
    assert.equal(await adbServerAnswers(port), false);
  } finally {
    sim.child.kill("SIGKILL");
  }
});
