/**
 * The accessibility forwarder on the simulated device, driven as AndroidEnv's A11yGrpcWrapper
 * drives it (a setting and two broadcasts through the device's shell) against a host-side
 * A11yService in this process: forests on request and every 100 ms, events as they happen, and a
 * host that is wrong, closed, or goes away and comes back.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { newDevice, sh, installPrebuilt } from "./android-helpers.ts";
import { startHostA11y, until, wrapperCommands, FORWARDER_COMPONENT } from "./a11y-forwarder-helpers.ts";
import type { SimAndroid } from "../src/android/index.ts";

async function enable(d: SimAndroid, port: number, host?: string): Promise<void> {
  for (const c of wrapperCommands(port, host)) {
    const r = await sh(d, c);
    assert.equal(r.code, 0, `${c}: ${r.err}`);
  }
}

test("am broadcast to the receiver prints what a device prints and sets the forwarder's flags", async () => {
  const d = newDevice();
  try {
    const [, , setGrpc] = wrapperCommands(4321);
    const r = await sh(d, setGrpc!);
    assert.equal(r.out, `Broadcasting: Intent { act=accessibility_forwarder.intent.action.SET_GRPC flg=0x400000 cmp=com.google.androidenv.accessibilityforwarder/.FlagsBroadcastReceiver (has extras) }\nBroadcast completed: result=0\n`);
    assert.deepEqual(d.system.forwarder.currentFlags, { host: "10.0.2.2", port: 4321, logTree: false });
    // Extras of the wrong type read as absent (getIntExtra's default 0, getStringExtra's null → 10.0.2.2).
    await sh(d, `am broadcast -a accessibility_forwarder.intent.action.SET_GRPC --es port 99 --ei host 7 -n ${FORWARDER_COMPONENT}.FlagsBroadcastReceiver`);
    assert.deepEqual(d.system.forwarder.currentFlags, { host: "10.0.2.2", port: 0, logTree: false });
    // Without the component the broadcast is implicit and a manifest receiver does not get it.
    await sh(d, "am broadcast -a accessibility_forwarder.intent.action.ENABLE_ACCESSIBILITY_TREE_LOGS");
    assert.equal(d.system.forwarder.currentFlags.logTree, false);
    const log = await sh(d, "logcat -d -s FlagsBroadcastReceiver");
    assert.match(log.out, /Setting gRPC endpoint to 10\.0\.2\.2:4321\./);
    assert.equal(d.system.forwarder.connected, false, "not enabled in settings: no connection");
  } finally {
    d.close();
  }
});

test("after the setting and both broadcasts the device answers get_forest on Bidi, logs trees and sends a click event", async () => {
  const host = await startHostA11y();
  const d = newDevice();
  try {
    await installPrebuilt(d, "sim_notes.apk");
    await enable(d, host.port);
    await until("the Bidi stream", () => host.streams() > 0 && d.system.forwarder.connected);
    const forest = await host.getForest();
    assert.equal(forest.windows.length, 1);
    const w = forest.windows[0]!;
    assert.equal(w.window_type, 1);
    assert.ok(w.is_active && w.is_focused);
    const icon = w.tree.nodes.find((n) => n.text === "Sim Notes");
    assert.ok(icon?.is_clickable, "the launcher's Sim Notes icon, clickable");
    assert.equal(icon.package_name, "com.android.launcher3");
    assert.equal(icon.view_id_resource_name, "com.android.launcher3:id/icon");
    const root = w.tree.nodes[0]!;
    assert.equal(root.depth, 0);
    assert.ok(root.child_ids.length > 0);
    // Tree logs: SendForest every 100 ms.
    await until("periodic SendForest", () => host.forests.length >= 3);
    // A tap on the icon: a click event about it, then the window changes.
    const x = Math.floor((icon.bounds_in_screen.left + icon.bounds_in_screen.right) / 2);
    const y = Math.floor((icon.bounds_in_screen.top + icon.bounds_in_screen.bottom) / 2);
    await sh(d, `input tap ${x} ${y}`);
    await until("the click and window events", () => host.events.some((e) => e["event_type"] === "TYPE_WINDOW_STATE_CHANGED"));
    const click = host.events.find((e) => e["event_type"] === "TYPE_VIEW_CLICKED");
    assert.ok(click, JSON.stringify(host.events));
    assert.equal(click["source_text"], "Sim Notes");
    assert.equal(click["event_package_name"], "com.android.launcher3");
    assert.equal(click["view_id"], "com.android.launcher3:id/icon");
    assert.match(click["event_timestamp_ms"]!, /^\d+$/);
    assert.ok(host.events.indexOf(click) < host.events.findIndex((e) => e["event_type"] === "TYPE_WINDOW_STATE_CHANGED"), "click first");
    const state = host.events.find((e) => e["event_type"] === "TYPE_WINDOW_STATE_CHANGED")!;
    assert.equal(state["event_package_name"], "com.farm.simapps.notes");
    const after = await host.getForest();
    assert.equal(after.windows.at(-1)!.tree.nodes[0]!.package_name, "com.farm.simapps.notes");
  } finally {
    d.close();
    await host.close();
  }
});

test("ids stay while views live; rotation turns the bounds in the forest", async () => {
  const host = await startHostA11y();
  const d = newDevice();
  try {
    await installPrebuilt(d, "sim_notes.apk");
    await enable(d, host.port);
    await until("the Bidi stream", () => d.system.forwarder.connected && host.streams() > 0);
    const a = await host.getForest();
    const b = await host.getForest();
    const ids = (f: typeof a) => f.windows.flatMap((w) => w.tree.nodes.map((n) => n.unique_id));
    assert.deepEqual(ids(b), ids(a));
    await sh(d, "settings put system user_rotation 1");
    const r = await host.getForest();
    assert.deepEqual(ids(r), ids(a));
    const rootA = a.windows[0]!.tree.nodes[0]!.bounds_in_screen;
    const rootR = r.windows[0]!.tree.nodes[0]!.bounds_in_screen;
    assert.deepEqual([rootR.right - rootR.left, rootR.bottom - rootR.top], [rootA.bottom - rootA.top, rootA.right - rootA.left]);
    const icon = (f: typeof a) => f.windows[0]!.tree.nodes.find((n) => n.text === "Sim Notes")!.bounds_in_screen;
    assert.notDeepEqual(icon(r), icon(a));
  } finally {
    d.close();
    await host.close();
  }
});

test("a closed port, the device's own address and a vanished host: the device keeps working, and reconnects when the host is back", async () => {
  const first = await startHostA11y();
  const port = first.port;
  await first.close();
  const d = newDevice();
  let host: Awaited<ReturnType<typeof startHostA11y>> | undefined;
  try {
    await enable(d, port, "127.0.0.1"); // the device's loopback: nothing of the host's there
    assert.equal((await sh(d, "echo alive")).out, "alive\n");
    await enable(d, port); // 10.0.2.2, but nothing listens yet
    assert.equal((await sh(d, "input tap 10 10")).code, 0);
    assert.equal(d.system.forwarder.connected, false);
    host = await startHostA11y(port);
    const h1 = host;
    // Connected (the channel) can come before the host has the stream: ask once it has.
    await until("the reconnect", () => d.system.forwarder.connected && h1.streams() > 0);
    await host.getForest();
    await host.close(); // the host vanishes
    await until("the forwarder to notice", () => !d.system.forwarder.connected);
    assert.equal((await sh(d, "echo still")).out, "still\n");
    host = await startHostA11y(port); // and restarts
    const h2 = host;
    await until("the second reconnect", () => d.system.forwarder.connected && h2.streams() > 0);
    assert.ok((await host.getForest()).windows.length >= 1);
    const log = await sh(d, "logcat -d -s AndroidRLTask");
    assert.match(log.out, /are you sure networking is turned on\?/);
  } finally {
    d.close();
    await host?.close();
  }
});

test("only while enabled: no stream without the setting, none after it is cleared; tree logs stop on DISABLE", async () => {
  const host = await startHostA11y();
  const d = newDevice();
  try {
    const [setting, enableLogs, setGrpc] = wrapperCommands(host.port);
    await sh(d, setGrpc!);
    await sh(d, enableLogs!);
    await sh(d, "input tap 5 5");
    assert.equal(host.streams(), 0);
    await sh(d, setting!);
    await until("the Bidi stream", () => host.streams() > 0);
    await until("tree logs", () => host.forests.length > 0);
    await sh(d, `am broadcast -a accessibility_forwarder.intent.action.DISABLE_ACCESSIBILITY_TREE_LOGS -n ${FORWARDER_COMPONENT}.FlagsBroadcastReceiver`);
    await host.getForest(); // Bidi still answers
    await sh(d, "sleep 2"); // past the 1 s deadline of any SendForest still in flight
    const n = host.forests.length;
    await sh(d, "sleep 0.5");
    assert.equal(host.forests.length, n, "no SendForest after DISABLE_ACCESSIBILITY_TREE_LOGS");
    await sh(d, "settings put secure enabled_accessibility_services ''");
    await until("the stream to close", () => host.streams() === 0 && !d.system.forwarder.connected);
  } finally {
    d.close();
    await host.close();
  }
});

test("a snapshot keeps the forwarder's flags; restoring one without them turns it off", async () => {
  const host = await startHostA11y();
  const d = newDevice();
  try {
    const plain = d.system.saveState();
    await enable(d, host.port);
    const saved = d.system.saveState();
    assert.deepEqual(saved.forwarder, { host: "10.0.2.2", port: host.port, logTree: true });
    d.system.restoreState(plain);
    assert.deepEqual(d.system.forwarder.currentFlags, { host: "", port: 0, logTree: false });
    d.system.restoreState(JSON.parse(JSON.stringify(saved)));
    await until("the Bidi stream after restore", () => d.system.forwarder.connected);
  } finally {
    d.close();
    await host.close();
  }
});

test("a host that writes nothing until it wants a forest still gets tree logs and events", async () => {
  const host = await startHostA11y(0, { greet: false });
  const d = newDevice();
  try {
    await enable(d, host.port);
    await until("the connection", () => d.system.forwarder.connected);
    await until("tree logs", () => host.forests.length > 0);
    await sh(d, "settings put system user_rotation 1");
    await until("a window-content event", () => host.events.some((e) => e["event_type"] === "TYPE_WINDOW_CONTENT_CHANGED"));
    assert.ok((await host.getForest()).windows.length >= 1);
  } finally {
    d.close();
    await host.close();
  }
});

test("AndroidEnv's servicer (every Bidi fails at once) still gets a forest every period and the events, as from the real app", async () => {
  const host = await startHostA11y(0, { bidiFails: true });
  const d = newDevice();
  try {
    await installPrebuilt(d, "sim_notes.apk");
    await enable(d, host.port);
    await until("the first SendForest", () => host.forests.length >= 1);
    await until("a failed Bidi", () => host.bidiCalls() >= 1);
    // Forests every a11yTreePeriodMs (100 ms): over ~1.5 s, several (generous lower bound on a busy machine).
    const before = host.forests.length;
    const t0 = Date.now();
    await until("forests over a second and a half", () => Date.now() - t0 >= 1500 && host.forests.length - before >= 5);
    assert.equal(d.system.forwarder.connected, false, "no Bidi stream was ever up");
    assert.equal(host.streams(), 0);
    const last = host.forests.at(-1)!;
    assert.ok(last.windows[0]!.tree.nodes.some((n) => n.text === "Sim Notes"));
    // Events, without any stream.
    const icon = last.windows[0]!.tree.nodes.find((n) => n.text === "Sim Notes")!.bounds_in_screen;
    await sh(d, `input tap ${Math.floor((icon.left + icon.right) / 2)} ${Math.floor((icon.top + icon.bottom) / 2)}`);
    await until("the click event", () => host.events.some((e) => e["event_type"] === "TYPE_VIEW_CLICKED" && e["source_text"] === "Sim Notes"));
    // The periodic forests follow the screen: the app's window comes in a later one.
    await until("a forest of Sim Notes", () => host.forests.at(-1)!.windows.some((w) => w.tree.nodes.some((n) => n.package_name === "com.farm.simapps.notes")));
  } finally {
    d.close();
    await host.close();
  }
});
