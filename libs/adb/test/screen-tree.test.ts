/**
 * `Device.screenTree` against a simulated device through a private adb server (uiautomator over exec-out),
 * and against a fake device-side forwarder written with grpc-js and our a11y protos (the forwarder path,
 * tested alone): the source chosen, the tree's content, and trouble as data.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { a11yGrpc, grpc, CLIENT_CHANNEL_OPTIONS, type AccessibilityForestMsg, type ClientToServerMsg, type ServerToClientMsg } from "@farm/a11y-grpc";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { A11yForwarderHub, AdbDriver, isScreenTree, type AdbDevice, type ScreenTreeEvent, type ShellResult } from "@farm/adb";

const APKS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../tasks/apks");

let adb: LocalAdbServer;
let sims: Awaited<ReturnType<typeof startSimulatedDevices>>;
let driver: AdbDriver;
let dev: AdbDevice;
const hub = new A11yForwarderHub({ maxBytes: 64 * 1024 });
const reads: ScreenTreeEvent[] = [];

before(async () => {
  adb = await startAdbServer();
  sims = await startSimulatedDevices({ adbPort: adb.port, count: 1, seed: 3 });
  driver = new AdbDriver({ port: adb.port, a11y: { forwarder: hub }, events: { onScreenTree: (e) => reads.push(e) } });
  dev = driver.device(sims.devices[0]!.serial);
  assert.equal((await dev.waitBootComplete(20_000)).status, "ok");
  const r = await dev.execute({ timeoutSec: 30, cmd: { command: "install_apk", location: { kind: "filesystem", path: path.join(APKS, "sim_notes.apk"), declaredPath: "apks/sim_notes.apk" } } });
  assert.equal(r.status, "ok", r.message);
});

after(async () => {
  await hub.close();
  await driver?.close();
  await sims?.close();
  await adb?.close();
});

test("uiautomator: the launcher comes back as one active window whose clickable nodes are the labelled icons", async () => {
  const t = await dev.screenTree({ timeoutMs: 20_000 });
  assert.ok(isScreenTree(t), `read failed: ${JSON.stringify(t)}`);
  assert.equal(t.source, "uiautomator");
  assert.equal(t.rotation, 0);
  assert.equal(t.windows.length, 1);
  const w = t.windows[0]!;
  assert.ok(w.isActive && w.isFocused);
  assert.equal(w.tree.nodes[0]!.packageName, "com.android.launcher3");
  const model = sims.devices[0]!.android.system.accessibility.snapshot().windows[0]!.nodes;
  const clickable = w.tree.nodes.filter((n) => n.isClickable);
  assert.deepEqual(
    clickable.map((n) => [n.text, n.viewIdResourceName, n.boundsInScreen]),
    model.filter((n) => n.clickable).map((n) => [n.text, n.resourceId, n.bounds]),
  );
  assert.ok(clickable.some((n) => n.text === "Sim Notes"));
  assert.equal(t.nodeCount, w.tree.nodes.length);
  assert.ok(t.bytes > 0);
  const ev = reads.at(-1)!;
  assert.deepEqual([ev.source, ev.outcome, ev.nodes], ["uiautomator", "ok", t.nodeCount]);
});

test("uiautomator: a screen that never settles is `not_idle`; a dump over the byte bound is refused; a slow one times out", async () => {
  const r = await dev.execute({ timeoutSec: 30, cmd: { command: "install_apk", location: { kind: "filesystem", path: path.join(APKS, "catch_the_ball.apk"), declaredPath: "apks/catch_the_ball.apk" } } });
  assert.equal(r.status, "ok", r.message);
  await dev.shell("am start -n com.example.catchtheball/com.example.catchtheball.MainActivity", { timeoutMs: 10_000 });
  try {
    const t = await dev.screenTree({ timeoutMs: 20_000 });
    assert.ok(!isScreenTree(t));
    assert.equal(t.outcome, "not_idle");
    assert.match(t.message, /could not get idle state/);
  } finally {
    await dev.shell("am force-stop com.example.catchtheball", { timeoutMs: 10_000 });
  }
  const small = new AdbDriver({ port: adb.port, a11y: { limits: { maxBytes: 200 } } });
  try {
    const t = await small.device(dev.serial).screenTree({ timeoutMs: 20_000 });
    assert.ok(!isScreenTree(t));
    assert.equal(t.outcome, "refused");
    assert.match(t.message, /went past 200 bytes/);
  } finally {
    await small.close();
  }
  sims.devices[0]!.android.system.faults.setLatencyProfile("emulator-adb");
  try {
    const t = await dev.screenTree({ timeoutMs: 100 });
    assert.ok(!isScreenTree(t));
    assert.equal(t.status, "timeout");
    assert.equal(t.outcome, "timeout");
  } finally {
    sims.devices[0]!.android.system.faults.setLatencyProfile("instant");
  }
});

type BidiClient = grpc.Client & { Bidi(): grpc.ClientDuplexStream<ClientToServerMsg, ServerToClientMsg> };

/** A device-side forwarder: dials the hub's port for `serial`, answers get_forest with `forest()`. */
function fakeForwarder(port: number, forest: () => AccessibilityForestMsg | Buffer): { close(): void } {
  const { A11yService } = a11yGrpc();
  const client = new A11yService(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), CLIENT_CHANNEL_OPTIONS) as unknown as BidiClient;
  const call = client.Bidi();
  call.on("error", () => undefined);
  call.on("data", (m: ServerToClientMsg) => {
    if (m.payload !== "get_forest") return;
    const f = forest();
    // A Buffer stands for a forest too large to send honestly: one window with that much title.
    const msg = Buffer.isBuffer(f) ? ({ windows: [{ title: f.toString("latin1") }] } as unknown as AccessibilityForestMsg) : f;
    call.write({ forest: msg });
  });
  // The hub knows a stream once its first message arrives: an event says hello, as the real app's do.
  call.write({ event: { event: { event_type: "TYPE_WINDOW_STATE_CHANGED" } } });
  return { close: () => (call.cancel(), client.close()) };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test("forwarder: enabling sends AndroidEnv's setting and broadcasts with this device's port (tree logs only when asked)", async () => {
  const lines: string[] = [];
  const fake = { serial: "emulator-9990", shell: async (line: string): Promise<ShellResult> => (lines.push(line), { status: "ok", message: "", stdout: "", durationMs: 0 }) };
  assert.equal((await hub.enable(fake, { treeLogs: true })).status, "ok");
  const port = await hub.portFor("emulator-9990");
  assert.equal(await hub.portFor("emulator-9990"), port, "one port per device, kept");
  // SET_GRPC as AndroidEnv's wrapper sends it (the real receiver reads port and host), plus this device's secret.
  const token = /--es token ([0-9a-f]{32})$/.exec(lines[3] ?? "")?.[1];
  assert.ok(token, lines[3]);
  assert.deepEqual(lines, [
    "settings put secure enabled_accessibility_services com.google.androidenv.accessibilityforwarder/com.google.androidenv.accessibilityforwarder.AccessibilityForwarder",
    "am broadcast -n com.google.androidenv.accessibilityforwarder/com.google.androidenv.accessibilityforwarder.FlagsBroadcastReceiver -a accessibility_forwarder.intent.action.ENABLE_ACCESSIBILITY_TREE_LOGS",
    `settings put global no_proxy 10.0.2.2:${port}`,
    `am broadcast -n com.google.androidenv.accessibilityforwarder/com.google.androidenv.accessibilityforwarder.FlagsBroadcastReceiver -a accessibility_forwarder.intent.action.SET_GRPC --ei port ${port} --es host 10.0.2.2 --es token ${token}`,
  ]);
  lines.length = 0;
  assert.equal((await hub.enable(fake)).status, "ok");
  assert.ok(!lines.some((l) => l.includes("ENABLE_ACCESSIBILITY_TREE_LOGS")), "no tree logs unless asked: reads ask on Bidi");
  assert.equal(lines.length, 3);
});

test("forwarder: once the device's forwarder is connected, screenTree reads its forest; bad forests are refused; a gone forwarder falls back", async () => {
  const serial = dev.serial;
  const port = await hub.portFor(serial);
  let answer: () => AccessibilityForestMsg | Buffer = () =>
    ({ windows: [{ id: 5, layer: 1, window_type: 1, is_active: true, is_focused: true, bounds_in_screen: { left: 0, top: 0, right: 360, bottom: 640 }, tree: { nodes: [{ unique_id: 1, child_ids: [2], class_name: "android.widget.FrameLayout" }, { unique_id: 2, text: "OK", is_clickable: true, depth: 1, actions: [{ id: 16, label: "click" }] }] } }] }) as unknown as AccessibilityForestMsg;
  const events: Record<string, string>[] = [];
  hub.onEvent = (s, e) => s === serial && events.push(e);
  const fw = fakeForwarder(port, () => answer());
  try {
    await until(() => hub.serves(serial), "the forwarder's stream");
    await until(() => events.length > 0, "the hello event");
    const t = await dev.screenTree({ timeoutMs: 10_000 });
    assert.ok(isScreenTree(t), JSON.stringify(t));
    assert.equal(t.source, "forwarder");
    assert.equal(t.windows[0]!.id, 5);
    const ok = t.windows[0]!.tree.nodes[1]!;
    assert.deepEqual([ok.text, ok.isClickable, ok.actions], ["OK", true, [{ id: 16, label: "click" }]]);
    assert.ok(t.bytes > 0);
    // uiautomator can still be asked for by name.
    const u = await dev.screenTree({ source: "uiautomator", timeoutMs: 20_000 });
    assert.ok(isScreenTree(u) && u.source === "uiautomator");
    answer = () => ({ windows: [{ tree: { nodes: [{ unique_id: 1, child_ids: [2] }, { unique_id: 2, child_ids: [1] }] } }] }) as unknown as AccessibilityForestMsg;
    const cyc = await dev.screenTree({ timeoutMs: 10_000 });
    assert.ok(!isScreenTree(cyc));
    assert.deepEqual([cyc.source, cyc.outcome], ["forwarder", "refused"]);
    answer = () => Buffer.alloc(100_000, 0x41);
    const huge = await dev.screenTree({ timeoutMs: 10_000 });
    assert.ok(!isScreenTree(huge));
    assert.equal(huge.outcome, "refused");
    assert.match(huge.message, /over the 65536-byte bound; not decoded/);
  } finally {
    fw.close();
  }
  await until(() => !hub.serves(serial), "the hub to notice the forwarder left");
  const back = await dev.screenTree({ timeoutMs: 20_000 });
  assert.ok(isScreenTree(back) && back.source === "uiautomator", "falls back to uiautomator");
  const forced = await dev.screenTree({ source: "forwarder", timeoutMs: 1000 });
  assert.ok(!isScreenTree(forced));
  assert.match(forced.message, /no accessibility forwarder of/);
});

test("forwarder: a connected forwarder that never answers is a timeout at the deadline", async () => {
  const serial = dev.serial;
  const { A11yService } = a11yGrpc();
  const client = new A11yService(`127.0.0.1:${await hub.portFor(serial)}`, grpc.credentials.createInsecure()) as unknown as BidiClient;
  const call = client.Bidi();
  call.on("error", () => undefined);
  call.write({ event: { event: {} } });
  try {
    await until(() => hub.serves(serial), "the silent forwarder's stream");
    const t = await dev.screenTree({ timeoutMs: 300 });
    assert.ok(!isScreenTree(t));
    assert.deepEqual([t.status, t.outcome, t.source], ["timeout", "timeout", "forwarder"]);
  } finally {
    call.cancel();
    client.close();
  }
});
