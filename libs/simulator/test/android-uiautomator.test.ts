import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { newDevice, sh, installPrebuilt, rlStartLine } from "./android-helpers.ts";
import { attr, dumpActiveWindow, dumpAllWindows, IllegalXmlCharacter } from "../src/android/commands/window-dump.ts";

const DECL = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>";
const NODE_ATTRS = /^<node(?: NAF="true")? index="\d+" text="[^"]*" resource-id="[^"]*" class="[^"]*" package="[^"]*" content-desc="[^"]*" checkable="(?:true|false)" checked="(?:true|false)" clickable="(?:true|false)" enabled="(?:true|false)" focusable="(?:true|false)" focused="(?:true|false)" scrollable="(?:true|false)" long-clickable="(?:true|false)" password="(?:true|false)" selected="(?:true|false)" bounds="\[-?\d+,-?\d+\]\[-?\d+,-?\d+\]"(?: \/>|>)$/;

/** Debian's Python (xml.etree) reads the dump: node count and the labelled clickable nodes with their bounds. */
function pythonRead(xml: string): { nodes: number; rotation: string; clickable: [string, string][] } {
  const py = `import sys, json, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.buffer.read())
nodes = list(root.iter("node"))
print(json.dumps({"nodes": len(nodes), "rotation": root.get("rotation"), "clickable": [[n.get("text"), n.get("bounds")] for n in nodes if n.get("clickable") == "true"]}))`;
  return JSON.parse(execFileSync("/usr/bin/python3", ["-c", py], { input: xml, encoding: "utf8" })) as ReturnType<typeof pythonRead>;
}

function splitDump(out: string, file: string): string {
  const msg = `UI hierchary dumped to: ${file}\n`;
  assert.ok(out.endsWith(msg), `ends with the real message: ${JSON.stringify(out.slice(-80))}`);
  return out.slice(0, -msg.length);
}

test("uiautomator dump /dev/tty prints the launcher as a device does, and Python reads the same clickable icons", async () => {
  const d = newDevice();
  await installPrebuilt(d, "sim_notes.apk");
  const r = await sh(d, "uiautomator dump /dev/tty");
  assert.equal(r.code, 0);
  assert.equal(r.err, "");
  const xml = splitDump(r.out, "/dev/tty");
  assert.ok(xml.startsWith(`${DECL}<hierarchy rotation="0"><node index="0" text="" resource-id="com.android.launcher3:id/launcher" class="android.widget.FrameLayout"`), xml.slice(0, 200));
  assert.ok(xml.endsWith("</node></hierarchy>"));
  const tags = xml.slice(DECL.length).match(/<node[^>]*>/g) ?? [];
  for (const t of tags) assert.match(t, NODE_ATTRS);
  const py = pythonRead(xml);
  assert.equal(py.nodes, tags.length);
  const icons = d.system.accessibility.snapshot().windows[0]!.nodes.filter((n) => n.clickable);
  assert.deepEqual(py.clickable, icons.map((n) => [n.text, `[${n.bounds.left},${n.bounds.top}][${n.bounds.right},${n.bounds.bottom}]`]));
  assert.ok(py.clickable.some(([text]) => text === "Sim Notes"));
});

test("uiautomator dump writes /sdcard/window_dump.xml by default, or the file given; --compressed leaves out plain layouts", async () => {
  const d = newDevice();
  await installPrebuilt(d, "sim_notes.apk");
  const r = await sh(d, "uiautomator dump");
  assert.equal(r.out, "UI hierchary dumped to: /sdcard/window_dump.xml\n");
  const full = (await sh(d, "cat /sdcard/window_dump.xml")).out;
  assert.ok(full.startsWith(DECL));
  assert.match(full, /class="android.view.ViewGroup"/);
  const c = await sh(d, "uiautomator dump --compressed /data/local/tmp/c.xml");
  assert.equal(c.out, "UI hierchary dumped to: /data/local/tmp/c.xml\n");
  const compressed = (await sh(d, "cat /data/local/tmp/c.xml")).out;
  assert.doesNotMatch(compressed, /android.view.ViewGroup/, "the workspace (no text, no action) is not important");
  assert.equal(pythonRead(compressed).clickable.length, pythonRead(full).clickable.length);
  // A file that cannot be written: the real dumper only logs it, and the message comes all the same.
  assert.equal((await sh(d, "uiautomator dump /sdcard")).out, "UI hierchary dumped to: /sdcard\n");
  assert.ok(d.system.fs.isDirectory("/sdcard"), "the folder is left alone");
  // The icons are the root's own children now, numbered from 0.
  assert.match(compressed, /<hierarchy rotation="0"><node index="0" [^>]*launcher"[^>]*><node index="0" text="[^"]+"/);
});

test("uiautomator dump follows rotation and names the window with --windows", async () => {
  const d = newDevice();
  await installPrebuilt(d, "sim_notes.apk");
  await sh(d, "settings put system accelerometer_rotation 0");
  await sh(d, "settings put system user_rotation 1");
  const xml = splitDump((await sh(d, "uiautomator dump /dev/tty")).out, "/dev/tty");
  assert.equal(pythonRead(xml).rotation, "1");
  assert.match(xml, /<hierarchy rotation="1"><node index="0" [^>]* bounds="\[0,0\]\[640,360\]"/);
  const all = splitDump((await sh(d, "uiautomator dump --windows /dev/tty")).out, "/dev/tty");
  assert.match(all, /^<\?xml[^>]*\?><displays><display id="0"><window index="0" title="Launcher" bounds="\[0,0\]\[640,360\]" active="true" focused="true" accessibility-focused="false" id="\d+" layer="0" type="TYPE_APPLICATION"><hierarchy rotation="1">/);
});

test("uiautomator dump fails with the real error while an app ticks in real time, and works once it is gone", async () => {
  const d = newDevice();
  await installPrebuilt(d, "catch_the_ball.apk");
  await sh(d, rlStartLine("com.example.catchtheball/com.example.catchtheball.MainActivity", "{}"));
  try {
    const r = await sh(d, "uiautomator dump /dev/tty");
    assert.equal(r.code, 0, "the real tool exits 0 after printing its error");
    assert.equal(r.err, "ERROR: could not get idle state.\n");
    assert.equal(r.out, "");
    // Under an emulator profile it waits for the (scaled) global timeout first: at least ten quiet spans.
    d.faults.setLatencyProfile("emulator-adb");
    const t0 = Date.now();
    const slow = await sh(d, "uiautomator dump /dev/tty");
    assert.equal(slow.err, "ERROR: could not get idle state.\n");
    assert.ok(Date.now() - t0 >= 10 * 200, `waited ${Date.now() - t0} ms`);
  } finally {
    await sh(d, "am force-stop com.example.catchtheball");
  }
  const after = await sh(d, "uiautomator dump /dev/tty");
  assert.equal(after.err, "");
  assert.match(after.out, /UI hierchary dumped to: \/dev\/tty\n$/);
});

test("a dump on an emulator profile takes the process start and a quiet span", async () => {
  const d = newDevice();
  d.faults.setLatencyProfile("emulator-grpc");
  const t0 = Date.now();
  const r = await sh(d, "uiautomator dump /dev/tty");
  assert.match(r.out, /dumped to/);
  assert.ok(Date.now() - t0 >= 2 * 200 - 5, `took ${Date.now() - t0} ms`);
});

test("attribute values are escaped as Android's serializer does", () => {
  assert.equal(attr("text", "a&b<c>d"), ' text="a&amp;b&lt;c&gt;d"');
  assert.equal(attr("text", `say "hi" it's`), ` text='say "hi" it&apos;s'`);
  assert.equal(attr("text", "it's"), ` text="it's"`);
  assert.equal(attr("text", "l1\nl2\tx\r"), ' text="l1&#10;l2&#9;x&#13;"');
  assert.equal(attr("text", "bell\u0007 nel\u0085 ok\u0080"), ' text="bell. nel\u0085 ok."');
  assert.equal(attr("text", "héllo 日本 😀"), ' text="héllo 日本 &#128512;"');
  assert.throws(() => attr("text", "nul\u0000"), IllegalXmlCharacter);
  assert.throws(() => attr("text", "lone\ud800"), /Illegal character \(U\+d800\)/);
});

test("uiautomator without a known subcommand prints its usage", async () => {
  const d = newDevice();
  assert.match((await sh(d, "uiautomator")).out, /dump \[--verbose\]\[file\]/);
  const bad = await sh(d, "uiautomator frobnicate");
  assert.equal(bad.code, 1);
  assert.match(bad.err, /Unknown command: frobnicate/);
});

test("with a dialog open, the dump is the dialog's window (the active one); --windows lists both, top first", () => {
  const n = (id: number, text: string, childIds: number[] = [], depth = 0) => ({
    uniqueId: id, className: "android.widget.TextView", packageName: "p", resourceId: "", text, contentDescription: "", hintText: "",
    bounds: { left: 0, top: 0, right: 100, bottom: 100 }, clickable: text !== "", longClickable: false, scrollable: false, checkable: false,
    checked: false, focusable: false, focused: false, enabled: true, selected: false, password: false, editable: false, visibleToUser: true,
    textSelectionStart: -1, textSelectionEnd: -1, depth, index: 0, drawingOrder: id, childIds, actions: [], windowId: 0, viewKey: "",
  });
  const win = (id: number, layer: number, top: boolean, nodes: ReturnType<typeof n>[]) => ({
    id, type: 1, layer, title: "App", packageName: "p", bounds: { left: 0, top: 0, right: 100, bottom: 100 }, active: top, focused: top, nodes,
  });
  const screen = { rotation: 0 as const, windows: [win(1, 0, false, [n(1, "", [2]), n(2, "Behind", [], 1)]), win(3, 1, true, [n(4, "", [5]), n(5, "OK", [], 1)])] };
  const opts = { compressed: false, display: { width: 100, height: 100 } };
  const one = dumpActiveWindow(screen, opts);
  assert.match(one, /text="OK"/);
  assert.doesNotMatch(one, /Behind/);
  const all = dumpAllWindows(screen, opts);
  assert.ok(all.indexOf('text="OK"') < all.indexOf('text="Behind"'), "top window first");
  assert.match(all, /<window index="0" title="App" [^>]*active="true"[^>]* id="3" layer="1"/);
  assert.match(all, /<window index="1" title="App" [^>]*active="false"[^>]* id="1" layer="0"/);
});
