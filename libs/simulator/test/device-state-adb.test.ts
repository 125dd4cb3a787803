/**
 * Issue 41's "Done when" lines for the simulated device, through the real adb CLI as a task's checks reach it:
 * `svc wifi disable`, then the Settings app shows Wi-Fi off, and a tap on its switch makes `settings get global
 * wifi_on` print 1; `adb pull` of Todo's database opens with Python's sqlite3 and holds the note typed on screen.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { adbCli, startRig, type Rig } from "./transport-helpers.ts";

const APKS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../tasks/apks");
let rig: Rig;
let tmp: string;
before(async () => {
  rig = await startRig(2);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sim-state-"));
});
after(async () => {
  await rig?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function adb(serial: string, args: string[]): Promise<string> {
  const r = await adbCli(rig.adb.port, serial, args);
  assert.equal(r.code, 0, `adb ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.toString();
}

interface DumpNode {
  text: string;
  desc: string;
  checked: string;
  x: number;
  y: number;
}

/** The nodes of `uiautomator dump` (text, description, checked, centre). */
async function dump(serial: string): Promise<DumpNode[]> {
  const xml = await adb(serial, ["exec-out", "uiautomator", "dump", "/dev/tty"]);
  const out: DumpNode[] = [];
  for (const m of xml.matchAll(/<node ([^>]*?)\/?>/g)) {
    const raw = (name: string): string => new RegExp(` ?${name}="([^"]*)"`).exec(m[1]!)?.[1] ?? "";
    const attr = (name: string): string => raw(name).replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, "&");
    const b = /\[(\d+),(\d+)\]\[(\d+),(\d+)\]/.exec(attr("bounds"))!;
    out.push({ text: attr("text"), desc: attr("content-desc"), checked: attr("checked"), x: Math.floor((Number(b[1]) + Number(b[3])) / 2), y: Math.floor((Number(b[2]) + Number(b[4])) / 2) });
  }
  return out;
}

async function node(serial: string, text: string): Promise<DumpNode> {
  const n = (await dump(serial)).find((x) => x.text === text || x.desc === text);
  assert.ok(n, `no node ${text}`);
  return n;
}

async function tap(serial: string, text: string): Promise<void> {
  const n = await node(serial, text);
  await adb(serial, ["shell", "input", "tap", String(n.x), String(n.y)]);
}

test("adb shell svc wifi disable, then the Settings app shows Wi-Fi off; a tap on its switch makes settings get global wifi_on print 1", async () => {
  const s = rig.fleet.devices[0]!.serial;
  await adb(s, ["shell", "svc", "wifi", "disable"]);
  assert.equal((await adb(s, ["shell", "settings", "get", "global", "wifi_on"])).trim(), "0");
  await adb(s, ["shell", "am", "start", "-W", "-n", "com.android.settings/.Settings"]);
  await tap(s, "Network & internet");
  await tap(s, "Internet");
  assert.equal((await node(s, "Wi-Fi")).checked, "false");
  await tap(s, "Wi-Fi");
  assert.equal((await adb(s, ["shell", "settings", "get", "global", "wifi_on"])).trim(), "1");
  assert.equal((await node(s, "Wi-Fi")).checked, "true");
  // Bluetooth reads 0 (not null) on a fresh image, and its switch writes bluetooth_on.
  assert.equal((await adb(s, ["shell", "settings", "get", "global", "bluetooth_on"])).trim(), "0");
});

test("adb pull of Todo's database opens with Python's sqlite3 and holds the note typed through the screen", async () => {
  const s = rig.fleet.devices[1]!.serial;
  await adb(s, ["install", path.join(APKS, "todo.apk")]);
  await adb(s, ["shell", "am", "start", "-W", "-n", "com.farm.simapps.todo/.MainActivity"]);
  await tap(s, "NEW NOTE");
  await adb(s, ["shell", "input", "text", "milk"]);
  await adb(s, ["shell", "input", "keyevent", "KEYCODE_ENTER"]);
  await adb(s, ["shell", "input", "text", "2%slitres"]);
  await tap(s, "SAVE");
  const local = path.join(tmp, "todo.db");
  await adb(s, ["pull", "/data/data/com.farm.simapps.todo/databases/todo.db", local]);
  const py = "import sqlite3,sys,json\nc=sqlite3.connect(sys.argv[1])\nprint(json.dumps(c.execute(\"SELECT title, body, done FROM notes WHERE title = 'milk'\").fetchall()))\nprint(c.execute('SELECT count(*) FROM notes').fetchone()[0])\nprint(c.execute('PRAGMA integrity_check').fetchone()[0])";
  const out = execFileSync("python3", ["-c", py, local], { encoding: "utf8" }).trim().split("\n");
  assert.deepEqual(out, ['[["milk", "2 litres", 0]]', "13", "ok"]);
  // The device's own sqlite3 reads the same rows.
  assert.equal(await adb(s, ["shell", "sqlite3", "/data/data/com.farm.simapps.todo/databases/todo.db", "\"SELECT title || ':' || body FROM notes WHERE id = 13\""]), "milk:2 litres\n");
});
