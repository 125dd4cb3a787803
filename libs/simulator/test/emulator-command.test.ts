/**
 * The `emulator` command (libs/simulator/sdk/emulator/emulator, as an SDK lays it out): boots an AVD
 * written by `farm sim avd create` into a device the real adb lists on the ports asked for, writes
 * and removes its discovery file, and stops on console kill, SIGTERM and gRPC setVmState(SHUTDOWN);
 * a crash is visible to the adb server; `adb emu avd snapshot save/load` restore the device.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { emulatorGrpc, grpc, RunState } from "@farm/emulator-grpc";
import { avdHome, createAvd as writeAvd, parseDiscovery } from "../src/index.ts";
import { adbCli, eventually } from "./transport-helpers.ts";
import { ConsoleClient, adbWithEnv, freeConsolePort, tempEnv, type TempEnv } from "./emulator-helpers.ts";

const EMULATOR = fileURLToPath(new URL("../sdk/emulator/emulator", import.meta.url));

interface Running {
  child: ChildProcess;
  out(): string;
  err(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function runEmulator(args: string[], env: NodeJS.ProcessEnv): Running {
  const child = spawn(EMULATOR, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once("close", (code, signal) => r({ code, signal })));
  return { child, out: () => out, err: () => err, exited };
}

/** Writes an AVD into the test's private ANDROID_AVD_HOME (what `farm sim avd create` does). */
function createAvd(t: TempEnv, name: string, screen: string): void {
  const [width, height] = screen.split("x").map(Number) as [number, number];
  writeAvd(avdHome(t.env), name, { width, height });
}

async function listed(adb: LocalAdbServer): Promise<string> {
  return (await adbCli(adb.port, undefined, ["devices"])).stdout.toString();
}

/** Boots `Pixel_Sim` on a free port pair with launcher-style flags; resolves once adb lists it as a device. */
async function boot(t: TempEnv, adb: LocalAdbServer, extra: string[] = [], envExtra: NodeJS.ProcessEnv = {}) {
  const port = await freeConsolePort();
  const emu = runEmulator(
    ["-avd", "Pixel_Sim", "-ports", `${port},${port + 1}`, "-no-window", "-no-skin", "-no-audio", "-gpu", "swiftshader_indirect", "-show-kernel", "-verbose", "-adb-path", "/usr/bin/adb", "-feature", "AllowSnapshotMigration", "-netspeed", "full", ...extra],
    { ...t.env, ANDROID_ADB_SERVER_PORT: String(adb.port), ...envExtra },
  );
  assert.ok(await eventually(() => /Boot completed in \d+ ms/.test(emu.out()) || emu.child.exitCode !== null, 60_000), emu.out() + emu.err());
  const serial = `emulator-${port}`;
  assert.ok(await eventually(async () => new RegExp(`^${serial}\\tdevice$`, "m").test(await listed(adb)), 15_000), `${serial} not listed\n${emu.out()}${emu.err()}`);
  return { emu, port, serial };
}

async function withRig(fn: (t: TempEnv, adb: LocalAdbServer) => Promise<void>): Promise<void> {
  const t = tempEnv();
  const adb = await startAdbServer();
  try {
    createAvd(t, "Pixel_Sim", "480x800");
    await fn(t, adb);
  } finally {
    await adb.close();
    t.cleanup();
  }
}

test("emulator -list-avds lists what farm sim avd create wrote; unknown options are refused by name", async () => {
  const t = tempEnv();
  try {
    createAvd(t, "Pixel_A", "360x640");
    createAvd(t, "Pixel_B", "1080x1920");
    const list = spawnSync(EMULATOR, ["-list-avds"], { env: t.env, encoding: "utf8" });
    assert.equal(list.status, 0, list.stderr);
    assert.equal(list.stdout, "Pixel_A\nPixel_B\n");
    const bad = spawnSync(EMULATOR, ["-avd", "Pixel_A", "-frobnicate"], { env: t.env, encoding: "utf8" });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /unknown option: -frobnicate/);
    const missing = spawnSync(EMULATOR, ["-avd", "Nope"], { env: t.env, encoding: "utf8" });
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /Unknown AVD name \[Nope\]/);
  } finally {
    t.cleanup();
  }
});

test("emulator boots an AVD on the ports asked for, advertises it, and console kill stops it", async () => {
  await withRig(async (t, adb) => {
    const { emu, port, serial } = await boot(t, adb, ["-no-snapshot"]);
    try {
      assert.match(emu.out(), /Started GRPC server at 127\.0\.0\.1:\d+, security: Local, auth: none/);
      assert.match(emu.out(), /Cold boot: requested by the user/);
      const size = await adbCli(adb.port, serial, ["shell", "wm", "size"]);
      assert.equal(size.stdout.toString(), "Physical size: 480x800\n", "the screen comes from hw.lcd.width/height");

      const file = path.join(t.runningDir, `pid_${emu.child.pid}.ini`);
      assert.ok(fs.existsSync(file), `no discovery file ${file}`);
      const keys = parseDiscovery(fs.readFileSync(file, "utf8"));
      assert.equal(keys.get("port.serial"), String(port));
      assert.equal(keys.get("port.adb"), String(port + 1));
      assert.equal(keys.get("avd.name"), "Pixel_Sim");
      assert.match(keys.get("avd.dir") ?? "", /Pixel_Sim\.avd$/);
      assert.match(keys.get("grpc.port") ?? "", /^\d+$/);
      assert.equal(keys.has("grpc.token"), false);

      const c = await ConsoleClient.connect(port);
      await c.readUntil(/OK\r\n/);
      c.send(`auth ${fs.readFileSync(t.tokenPath, "utf8")}\nkill\n`);
      assert.match(await c.readUntil(/bye bye\r\n/), /OK: killing emulator, bye bye\r\n$/);
      c.close();
      assert.deepEqual(await emu.exited, { code: 0, signal: null });
      assert.equal(fs.existsSync(file), false, "the discovery file must go with the emulator");
      assert.ok(await eventually(async () => !(await listed(adb)).includes(serial), 5000), "adb still lists the killed emulator");
    } finally {
      emu.child.kill("SIGKILL");
    }
  });
});

test("SIGTERM and gRPC setVmState(SHUTDOWN) stop the emulator; a token-auth gRPC endpoint advertises its token", async () => {
  await withRig(async (t, adb) => {
    const first = await boot(t, adb, ["-no-snapshot"]);
    first.emu.child.kill("SIGTERM");
    assert.deepEqual(await first.emu.exited, { code: 0, signal: null }, first.emu.err());
    assert.ok(await eventually(async () => !(await listed(adb)).includes(first.serial), 5000));

    const second = await boot(t, adb, ["-no-snapshot", "-grpc-use-token"]);
    try {
      assert.match(second.emu.out(), /auth: \+token/);
      const keys = parseDiscovery(fs.readFileSync(path.join(t.runningDir, `pid_${second.emu.child.pid}.ini`), "utf8"));
      const port = Number(keys.get("grpc.port"));
      const token = keys.get("grpc.token");
      assert.ok(token, "grpc.token missing from the discovery file");
      const { EmulatorController } = emulatorGrpc();
      const client = new EmulatorController(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      const md = new grpc.Metadata();
      md.set("authorization", `Bearer ${token}`);
      await new Promise<void>((resolve, reject) =>
        (client as unknown as { setVmState(r: object, m: grpc.Metadata, cb: (e: Error | null) => void): void }).setVmState({ state: RunState.SHUTDOWN }, md, (e) => (e ? reject(e) : resolve())),
      );
      client.close();
      assert.deepEqual(await second.emu.exited, { code: 0, signal: null }, second.emu.err());
      assert.ok(await eventually(async () => !(await listed(adb)).includes(second.serial), 5000));
    } finally {
      second.emu.child.kill("SIGKILL");
    }
  });
});

test("an injected crash kills the process and the adb server sees the device go", async () => {
  await withRig(async (t, adb) => {
    const { emu, serial } = await boot(t, adb, ["-no-snapshot"], { FARM_EMULATOR_FAULTS: "crash-after-ms=4000" });
    const end = await emu.exited;
    assert.equal(end.signal, "SIGKILL", `expected an abrupt death, got ${JSON.stringify(end)}`);
    assert.match(emu.err(), /injected crash/);
    assert.ok(await eventually(async () => !new RegExp(`^${serial}\\tdevice$`, "m").test(await listed(adb)), 5000), "adb still lists the crashed emulator as a device");
  });
});

test("adb emu avd snapshot save / load restore the device; adb emu kill stops the emulator; the quick-boot snapshot boots next time", async () => {
  await withRig(async (t, adb) => {
    const { emu, serial } = await boot(t, adb);
    try {
      assert.match(emu.out(), /Cold boot: snapshot doesn't exist/);
      const shell = async (...args: string[]) => (await adbCli(adb.port, serial, ["shell", ...args])).stdout.toString();
      await shell("settings", "put", "system", "farm_marker", "before");
      const save = await adbWithEnv(adb.port, serial, ["emu", "avd", "snapshot", "save", "clean"], t.env);
      assert.equal(save.code, 0, save.stderr);
      assert.doesNotMatch(save.stdout, /KO/);
      await shell("settings", "put", "system", "farm_marker", "after");
      assert.equal(await shell("settings", "get", "system", "farm_marker"), "after\n");

      const load = await adbWithEnv(adb.port, serial, ["emu", "avd", "snapshot", "load", "clean"], t.env);
      assert.equal(load.code, 0, load.stderr);
      assert.doesNotMatch(load.stdout, /KO/);
      assert.equal(await shell("settings", "get", "system", "farm_marker"), "before\n", "the snapshot load must restore the settings");

      const list = await adbWithEnv(adb.port, serial, ["emu", "avd", "snapshot", "list"], t.env);
      assert.match(list.stdout, /^--\s+clean\s/m);
      const missing = await adbWithEnv(adb.port, serial, ["emu", "avd", "snapshot", "load", "nope"], t.env);
      assert.match(missing.stdout, /KO: .*nope/);

      const kill = await adbWithEnv(adb.port, serial, ["emu", "kill"], t.env);
      assert.equal(kill.code, 0, kill.stderr);
      assert.deepEqual(await emu.exited, { code: 0, signal: null }, emu.err());
      assert.match(emu.out(), /Saved snapshot 'default_boot'/);
    } finally {
      emu.child.kill("SIGKILL");
    }
    // The quick-boot snapshot saved on exit boots the next run, with the state it had, taking the
    // profile's snapshot-boot time (emulator-adb: 3 s, as a real emulator's 2.5–3.7 s).
    const again = await boot(t, adb, ["-no-snapshot-save"], { FARM_EMULATOR_PROFILE: "emulator-adb" });
    try {
      assert.match(again.emu.out(), /Successfully loaded snapshot 'default_boot'/);
      const bootMs = Number(/Boot completed in (\d+) ms/.exec(again.emu.out())?.[1]);
      assert.ok(bootMs >= 3000, `a snapshot boot under emulator-adb took ${bootMs} ms, expected >= 3000`);
      const marker = await adbCli(adb.port, again.serial, ["shell", "settings", "get", "system", "farm_marker"]);
      assert.equal(marker.stdout.toString(), "before\n");
      again.emu.child.kill("SIGTERM");
      assert.deepEqual(await again.emu.exited, { code: 0, signal: null });
    } finally {
      again.emu.child.kill("SIGKILL");
    }
  });
});
