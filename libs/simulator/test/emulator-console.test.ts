/**
 * The emulator console on a simulated emulator's console port: the emulator's banner, auth with the
 * token file, replies ending in OK / KO, `adb emu …` through the real adb CLI, and hostile clients.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { SimEmulator } from "../src/index.ts";
import { adbCli, eventually } from "./transport-helpers.ts";
import { ConsoleClient, adbWithEnv, freeConsolePort, tempEnv, type TempEnv } from "./emulator-helpers.ts";

async function withEmulator(fn: (ctx: { adb: LocalAdbServer; emu: SimEmulator; t: TempEnv }) => Promise<void>): Promise<void> {
  const t = tempEnv();
  const adb = await startAdbServer();
  let emu: SimEmulator | undefined;
  try {
    emu = await SimEmulator.start({ adbPort: adb.port, consolePort: await freeConsolePort(), tokenPath: t.tokenPath, discovery: false, avdName: "Pixel_Sim" });
    await fn({ adb, emu, t });
  } finally {
    await emu?.close();
    await adb.close();
    t.cleanup();
  }
}

async function authed(emu: SimEmulator, tokenPath: string): Promise<ConsoleClient> {
  const c = await ConsoleClient.connect(emu.consolePort);
  await c.readUntil(/OK\r\n/);
  c.send(`auth ${fs.readFileSync(tokenPath, "utf8")}\n`);
  await c.readUntil(/OK\r\n/);
  return c;
}

test("a raw console session: banner, commands refused before auth, a wrong token refused, then the commands", async () => {
  await withEmulator(async ({ adb, emu, t }) => {
    assert.equal(emu.serial, `emulator-${emu.consolePort}`);
    assert.equal(emu.adbPort, emu.consolePort + 1);
    const token = fs.readFileSync(t.tokenPath, "utf8");
    assert.match(token, /^[A-Za-z0-9+/]{16}$/, "the console creates a 16-character token, as the emulator does");
    assert.equal(fs.statSync(t.tokenPath).mode & 0o777, 0o600);

    const c = await ConsoleClient.connect(emu.consolePort);
    try {
      const banner = await c.readUntil(/OK\r\n/);
      assert.equal(
        banner,
        "Android Console: Authentication required\r\nAndroid Console: type 'auth <auth_token>' to authenticate\r\n" +
          `Android Console: you can find your <auth_token> in \r\n'${t.tokenPath}'\r\nOK\r\n`,
      );
      c.send("kill\n");
      assert.equal(await c.readUntil(/\r\n/), "KO: unknown command, try 'help'\r\n");
      c.send("ping\n");
      assert.equal(await c.readUntil(/OK\r\n/), "I am alive!\r\nOK\r\n");
      c.send("avd name\n");
      assert.equal(await c.readUntil(/OK\r\n/), "Pixel_Sim\r\nOK\r\n", "avd name is allowed before auth");
      c.send("auth wrong-token\n");
      assert.equal(await c.readUntil(/\r\n/), "KO: authentication token does not match ~/.emulator_console_auth_token\r\n");
      c.send(`auth ${token}\r\n`);
      assert.equal(await c.readUntil(/OK\r\n/), "Android Console: type 'help' for a list of commands\r\nOK\r\n");

      c.send("help\n");
      const help = await c.readUntil(/OK\r\n/);
      for (const cmd of ["ping", "kill", "avd", "rotate", "quit|exit"]) assert.match(help, new RegExp(`^    ${cmd.replace("|", "\\|")}\\r$`, "m"));
      c.send("avd status\n");
      assert.equal(await c.readUntil(/OK\r\n/), "virtual device is running\r\nOK\r\n");
      c.send("avd bogus\n");
      assert.match(await c.readUntil(/KO:[^\n]*\r\n/), /available sub-commands:[\s\S]*KO:  bad sub-command\r\n$/);
      c.send("avd snapshot save\n");
      assert.match(await c.readUntil(/KO:[^\n]*\r\n/), /^KO: /);

      // rotate turns the device clockwise: the display goes to ROTATION_270 (user_rotation 3).
      c.send("rotate\n");
      assert.equal(await c.readUntil(/OK\r\n/), "OK\r\n");
      const rot = await adbCli(adb.port, emu.serial, ["shell", "settings", "get", "system", "user_rotation"]);
      assert.equal(rot.stdout.toString().trim(), "3");

      // avd stop pauses the VM: adb gets no answer until avd start.
      c.send("avd stop\n");
      await c.readUntil(/OK\r\n/);
      c.send("avd status\n");
      assert.equal(await c.readUntil(/OK\r\n/), "virtual device is stopped\r\nOK\r\n");
      const hung = await adbCli(adb.port, emu.serial, ["shell", "echo", "hi"], { timeoutMs: 1500 });
      assert.notEqual(hung.stdout.toString(), "hi\n", "a stopped VM must not answer");
      c.send("avd start\n");
      await c.readUntil(/OK\r\n/);
      assert.ok(await eventually(async () => (await adbCli(adb.port, emu.serial, ["shell", "echo", "hi"], { timeoutMs: 3000 })).stdout.toString() === "hi\n", 10_000));

      c.send("quit\n");
      await c.waitClosed();
    } finally {
      c.close();
    }
  });
});

test("an empty token file turns auth off, as in the emulator", async () => {
  await withEmulator(async ({ emu, t }) => {
    fs.writeFileSync(t.tokenPath, "");
    const c = await ConsoleClient.connect(emu.consolePort);
    try {
      assert.equal(await c.readUntil(/OK\r\n/), "Android Console: type 'help' for a list of commands\r\nOK\r\n");
      c.send("avd status\n");
      assert.equal(await c.readUntil(/OK\r\n/), "virtual device is running\r\nOK\r\n");
    } finally {
      c.close();
    }
  });
});

test("adb emu through the real adb CLI: it authenticates with ~/.emulator_console_auth_token; a wrong token is refused; kill stops the device", async () => {
  await withEmulator(async ({ adb, emu, t }) => {
    const status = await adbWithEnv(adb.port, emu.serial, ["emu", "avd", "status"], t.env);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /virtual device is running/);

    // Another user's token: adb sends it, the console refuses it, and `kill` never runs.
    const other = tempEnv();
    try {
      fs.writeFileSync(other.tokenPath, "not-the-token");
      const refused = await adbWithEnv(adb.port, emu.serial, ["emu", "kill"], other.env);
      assert.doesNotMatch(refused.stdout, /killing emulator/);
      const listed = (await adbCli(adb.port, undefined, ["devices"])).stdout.toString();
      assert.match(listed, new RegExp(`^${emu.serial}\\tdevice$`, "m"), "a refused kill must leave the device running");
    } finally {
      other.cleanup();
    }

    const kill = await adbWithEnv(adb.port, emu.serial, ["emu", "kill"], t.env);
    assert.equal(kill.code, 0, kill.stderr);
    const gone = await eventually(async () => !(await adbCli(adb.port, undefined, ["devices"])).stdout.toString().includes(emu.serial), 5000);
    assert.ok(gone, "the adb server still lists the killed emulator");
    const refusedConnect = await new Promise<boolean>((resolve) => {
      const s = net.connect({ port: emu.consolePort, host: "127.0.0.1" });
      s.once("connect", () => (s.destroy(), resolve(false)));
      s.once("error", () => resolve(true));
    });
    assert.ok(refusedConnect, "the console port must close with the emulator");
  });
});

test("hostile console clients: overlong lines, binary, HTTP, many sessions and a client that never reads", async () => {
  await withEmulator(async ({ emu, t }) => {
    // A 100 KB line is cut at the emulator's 4 KiB buffer; the session keeps working.
    const long = await authed(emu, t.tokenPath);
    long.send("x".repeat(100_000) + "\nping\n");
    assert.match(await long.readUntil(/I am alive!\r\nOK\r\n/), /I am alive!\r\nOK\r\n$/);
    long.close();

    const bin = await ConsoleClient.connect(emu.consolePort);
    await bin.readUntil(/OK\r\n/);
    bin.socket.write(Buffer.from([0xff, 0xfe, 0x41, 0x0a]));
    assert.match(await bin.readUntil(/Aborting\r\n/), /KO: Forbidden binary request\. Aborting\r\n$/);
    await bin.waitClosed();

    const http = await ConsoleClient.connect(emu.consolePort);
    await http.readUntil(/OK\r\n/);
    http.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert.match(await http.readUntil(/Aborting\r\n/), /KO: Forbidden HTTP request\. Aborting\r\n$/);
    await http.waitClosed();

    // A client that sends thousands of commands and never reads its replies.
    const flood = await authed(emu, t.tokenPath);
    flood.socket.pause();
    flood.send("help-verbose\n".repeat(20_000));

    // 40 idle sessions at once: beyond the cap they are refused, and the console still serves.
    const idle = await Promise.all(Array.from({ length: 40 }, () => ConsoleClient.connect(emu.consolePort)));
    for (const c of idle) c.close();
    flood.close();
    assert.ok(
      await eventually(async () => {
        const c = await ConsoleClient.connect(emu.consolePort).catch(() => undefined);
        if (!c) return false;
        try {
          await c.readUntil(/OK\r\n/, 2000);
          c.send("ping\n");
          return /I am alive!/.test(await c.readUntil(/OK\r\n/, 2000));
        } catch {
          return false;
        } finally {
          c.close();
        }
      }, 10_000),
      "the console must still answer after the hostile clients",
    );
  });
});

test("console snapshots: save / list / load / delete on the device's snapshots; -read-only refuses them", async () => {
  const t = tempEnv();
  const adb = await startAdbServer();
  const snapshotDir = `${t.home}/snapshots`;
  const emu = await SimEmulator.start({ adbPort: adb.port, consolePort: await freeConsolePort(), tokenPath: t.tokenPath, discovery: false, snapshotDir });
  const ro = await SimEmulator.start({ adbPort: adb.port, consolePort: await freeConsolePort(), tokenPath: t.tokenPath, discovery: false, snapshotDir, readOnly: true });
  try {
    const c = await authed(emu, t.tokenPath);
    c.send("avd snapshot list\n");
    assert.equal(await c.readUntil(/OK\r\n/), "There is no snapshot available.\r\nOK\r\n");
    c.send("avd snapshot save clean\n");
    assert.equal(await c.readUntil(/OK\r\n/), "OK\r\n");
    c.send("avd snapshot list\n");
    const list = await c.readUntil(/OK\r\n/);
    assert.match(list, /^List of snapshots present on all disks:\r\nID {8}TAG {17}VM SIZE {16}DATE {7}VM CLOCK\r\n-- {8}clean {15}/);
    c.send("avd snapshot get\n");
    assert.equal(await c.readUntil(/OK\r\n/), "clean\r\nOK\r\n");
    c.send("avd snapshot load ../etc\n");
    assert.match(await c.readUntil(/\r\n/), /^KO: invalid snapshot name/);
    c.send("avd snapshot del clean\n");
    assert.equal(await c.readUntil(/OK\r\n/), "OK\r\n");
    c.send("avd snapshot load clean\n");
    assert.match(await c.readUntil(/\r\n/), /^KO: snapshot clean does not exist/);
    c.close();

    const r = await authed(ro, t.tokenPath);
    r.send("avd snapshot save x\n");
    assert.equal(await r.readUntil(/\r\n/), 'KO: Snapshot save is disabled because "-read-only" was specified\r\n');
    r.close();
  } finally {
    await emu.close();
    await ro.close();
    await adb.close();
    t.cleanup();
  }
});
