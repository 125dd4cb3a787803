/** The real adb CLI (Debian adb 29) against simulated emulators through a private adb server. */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PNG } from "pngjs";
import { PREBUILT_APKS, buildSimApk } from "@farm/simulator/testing";
import { adbCli, startRig, type Rig } from "./transport-helpers.ts";

let rig: Rig;
let tmp: string;
before(async () => {
  rig = await startRig(2);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sim-transport-"));
});
after(async () => {
  await rig?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const cli = (serial: string | undefined, args: string[], opts?: { input?: Uint8Array | string }) => adbCli(rig.adb.port, serial, args, opts);
const serialOf = (i: number) => rig.fleet.devices[i]!.serial;

test("adb devices -l lists every simulated emulator with product, model and device", async () => {
  const r = await cli(undefined, ["devices", "-l"]);
  assert.equal(r.code, 0);
  for (const d of rig.fleet.devices) {
    assert.match(d.serial, /^emulator-\d+$/);
    assert.equal(d.serial, `emulator-${d.port - 1}`);
    const line = r.stdout.toString().split("\n").find((l) => l.startsWith(d.serial + " "));
    assert.ok(line, `${d.serial} missing from:\n${r.stdout}`);
    assert.match(line, /\sdevice product:\S+ model:\S+ device:\S+ transport_id:\d+/);
  }
});

test("adb shell (shell v2): output, stderr and exit codes propagate", async () => {
  const s = serialOf(0);
  const ok = await cli(s, ["shell", "echo", "hello", "world"]);
  assert.equal(ok.code, 0);
  assert.equal(ok.stdout.toString(), "hello world\n");
  assert.equal((await cli(s, ["shell", "false"])).code, 1);
  assert.equal((await cli(s, ["shell", "exit 42"])).code, 42);
  const missing = await cli(s, ["shell", "definitely-not-a-command"]);
  assert.equal(missing.code, 127);
  assert.equal(missing.stdout.length, 0, "the error goes to stderr, not stdout");
  assert.match(missing.stderr, /not found/);
});

test("adb shell with piped stdin runs each line in order (interactive v2), exit code of exit N", async () => {
  const r = await cli(serialOf(0), ["shell"], { input: "echo one\necho two\nexit 3\necho never\n" });
  assert.equal(r.stdout.toString(), "one\ntwo\n");
  assert.equal(r.code, 3);
});

test("adb push / adb pull round-trip a binary file (several sync DATA chunks)", async () => {
  const s = serialOf(1);
  const local = path.join(tmp, "blob.bin");
  const back = path.join(tmp, "back.bin");
  const data = randomBytes(300_000);
  fs.writeFileSync(local, data);
  const push = await cli(s, ["push", local, "/sdcard/blob.bin"]);
  assert.equal(push.code, 0, push.stderr);
  const pull = await cli(s, ["pull", "/sdcard/blob.bin", back]);
  assert.equal(pull.code, 0, pull.stderr);
  assert.deepEqual(fs.readFileSync(back), data);
  // Pushing into a directory appends the file name (STA2 reports a directory).
  assert.equal((await cli(s, ["push", local, "/sdcard/"])).code, 0);
  assert.equal((await cli(s, ["shell", "ls", "/sdcard/blob.bin"])).code, 0);
  const missing = await cli(s, ["pull", "/sdcard/no-such-file", back]);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr + missing.stdout.toString(), /No such file/);
});

test("adb install of a simulated APK (streamed install over exec:cmd package)", async () => {
  const s = serialOf(1);
  const spec = PREBUILT_APKS[0]!.spec;
  const apk = path.join(tmp, "app.apk");
  fs.writeFileSync(apk, buildSimApk(spec));
  const r = await cli(s, ["install", "-r", apk]);
  assert.equal(r.code, 0, r.stderr + r.stdout.toString());
  assert.match(r.stdout.toString(), /Success/);
  const listed = await cli(s, ["shell", "pm", "list", "packages"]);
  assert.match(listed.stdout.toString(), new RegExp(`^package:${spec.packageName.replace(/\./g, "\\.")}$`, "m"));
  fs.writeFileSync(apk, "not an apk at all");
  const bad = await cli(s, ["install", apk]);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stdout.toString() + bad.stderr, /Failure/);
});

test("adb logcat -v epoch with a filter prints only the selected tag", async () => {
  const d = rig.fleet.devices[0]!;
  d.android.system.log.append({ pid: 4242, tid: 4243, priority: "I", tag: "AndroidRLTask", message: "score: 7" });
  d.android.system.log.append({ pid: 4242, tid: 4243, priority: "I", tag: "OtherTag", message: "noise" });
  const r = await cli(d.serial, ["logcat", "-d", "-v", "epoch", "AndroidRLTask:V", "*:S"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.toString().split("\n").filter((l) => l.trim() && !l.startsWith("---------"));
  assert.ok(lines.length >= 1);
  for (const l of lines) assert.match(l, /^\s+\d+\.\d{3}\s+\d+\s+\d+ [VDIWEF] AndroidRLTask: /);
  assert.ok(lines.some((l) => l.endsWith("AndroidRLTask: score: 7")));
});

test("adb logcat (streaming) keeps delivering lines until the CLI goes away", async () => {
  const d = rig.fleet.devices[1]!;
  const { spawn } = await import("node:child_process");
  const child = spawn("adb", ["-P", String(rig.adb.port), "-s", d.serial, "logcat", "-v", "epoch", "StreamTag:I", "*:S"], { stdio: ["ignore", "pipe", "ignore"] });
  let out = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  const exited = new Promise((r) => child.once("close", r));
  try {
    const deadline = Date.now() + 10_000;
    let n = 0;
    while (!out.includes("StreamTag: live 3") && Date.now() < deadline) {
      d.android.system.log.append({ pid: 1, tid: 1, priority: "I", tag: "StreamTag", message: `live ${n++}` });
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(out, /StreamTag: live 3/);
  } finally {
    child.kill("SIGINT");
    await exited;
  }
});

test("adb exec-out screencap -p gives a PNG that decodes to the screen size", async () => {
  const d = rig.fleet.devices[0]!;
  const r = await cli(d.serial, ["exec-out", "screencap", "-p"]);
  assert.equal(r.code, 0, r.stderr);
  const png = PNG.sync.read(r.stdout);
  const fb = d.android.framebuffer();
  assert.equal(png.width, fb.width);
  assert.equal(png.height, fb.height);
});

test("unknown services are refused (CLSE) and the CLI reports it", async () => {
  const r = await cli(serialOf(0), ["jdwp"]);
  assert.notEqual(r.code, 0);
});
