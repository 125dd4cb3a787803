/**
 * `emulator -ports C,A` with A != C+1, as a real emulator runs it: adb lists the device as
 * emulator-(A-1); the console answers on C; `adb -s emulator-(A-1) emu …` goes to port A-1 (adb derives
 * the console port from the serial), where no console listens, so it fails and the emulator runs on.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startAdbServer } from "@farm/local-services";
import { avdHome, createAvd, parseDiscovery } from "../src/index.ts";
import { adbCli, eventually } from "./transport-helpers.ts";
import { ConsoleClient, adbWithEnv, freeConsolePort, tempEnv } from "./emulator-helpers.ts";

const EMULATOR = fileURLToPath(new URL("../sdk/emulator/emulator", import.meta.url));

/** Console C and adb A with A-1 free and C far from A (two separate free pairs). */
async function splitPorts(): Promise<{ consolePort: number; adbPort: number }> {
  const a = await freeConsolePort();
  let c = await freeConsolePort();
  while (Math.abs(c - a) < 2) c = await freeConsolePort();
  return { consolePort: c, adbPort: a + 1 };
}

test("-ports C,A: serial emulator-(A-1), console on C, adb emu goes to A-1 and fails; the discovery file has both ports", async () => {
  const t = tempEnv();
  const adb = await startAdbServer();
  createAvd(avdHome(t.env), "Split", { width: 360, height: 640 });
  const { consolePort, adbPort } = await splitPorts();
  const serial = `emulator-${adbPort - 1}`;
  const child = spawn(EMULATOR, ["-avd", "Split", "-ports", `${consolePort},${adbPort}`, "-no-snapshot", "-no-window"], {
    env: { ...t.env, ANDROID_ADB_SERVER_PORT: String(adb.port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr.on("data", (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((r) => child.once("close", (code) => r(code)));
  try {
    assert.ok(await eventually(async () => new RegExp(`^${serial}\\tdevice$`, "m").test((await adbCli(adb.port, undefined, ["devices"])).stdout.toString()), 60_000), `${serial} not listed\n${out}`);
    const prop = await adbCli(adb.port, serial, ["shell", "getprop", "sys.boot_completed"]);
    assert.equal(prop.stdout.toString().trim(), "1");

    const keys = parseDiscovery(fs.readFileSync(path.join(t.runningDir, `pid_${child.pid}.ini`), "utf8"));
    assert.deepEqual([keys.get("port.serial"), keys.get("port.adb"), keys.get("port.console")], [String(adbPort - 1), String(adbPort), String(consolePort)]);

    // adb emu connects to the port in the serial, not to the console: it fails, the emulator runs on.
    const emu = await adbWithEnv(adb.port, serial, ["emu", "kill"], t.env);
    assert.notEqual(emu.code, 0, `adb emu should fail: ${emu.stdout}${emu.stderr}`);
    assert.equal(child.exitCode, null, "adb emu kill must not reach the console");

    // The console itself is on C: kill there stops the emulator.
    const con = await ConsoleClient.connect(consolePort);
    await con.readUntil(/OK\r\n/);
    con.send(`auth ${fs.readFileSync(t.tokenPath, "utf8").trim()}\nkill\n`);
    await con.readUntil(/bye bye/);
    con.close();
    assert.equal(await exited, 0, out);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
    await exited;
    await adb.close();
    t.cleanup();
  }
});
