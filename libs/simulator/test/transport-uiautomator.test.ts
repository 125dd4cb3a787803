/** `uiautomator dump` through the real adb CLI and a private adb server: exec-out, shell, and the file pulled. */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { adbCli, startRig, type Rig } from "./transport-helpers.ts";

let rig: Rig;
let tmp: string;
before(async () => {
  rig = await startRig(1);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sim-uiautomator-"));
});
after(async () => {
  await rig?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const cli = (args: string[]) => adbCli(rig.adb.port, rig.fleet.devices[0]!.serial, args);

test("adb exec-out uiautomator dump /dev/tty gives the XML then the message; adb shell + pull gives the same XML", async () => {
  const out = await cli(["exec-out", "uiautomator", "dump", "/dev/tty"]);
  assert.equal(out.code, 0);
  const text = out.stdout.toString("utf8");
  const msg = "UI hierchary dumped to: /dev/tty\n";
  assert.ok(text.startsWith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"), text.slice(0, 120));
  assert.ok(text.endsWith(`</hierarchy>${msg}`), text.slice(-120));
  const sh = await cli(["shell", "uiautomator", "dump"]);
  assert.equal(sh.code, 0);
  assert.equal(sh.stdout.toString(), "UI hierchary dumped to: /sdcard/window_dump.xml\n");
  const local = path.join(tmp, "window_dump.xml");
  assert.equal((await cli(["pull", "/sdcard/window_dump.xml", local])).code, 0);
  assert.equal(fs.readFileSync(local, "utf8"), text.slice(0, -msg.length));
});
