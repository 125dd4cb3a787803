import { test } from "node:test";
import assert from "node:assert/strict";
import { newDevice, sh, installPrebuilt } from "./android-helpers.ts";
import { displayToNatural, naturalToDisplay } from "../src/graphics/orientation.ts";

test("naturalToDisplay inverts displayToNatural at every rotation", () => {
  for (const r of [0, 1, 2, 3] as const) {
    for (const [x, y] of [[0, 0], [3, 5], [9, 19]] as const) {
      const d = naturalToDisplay(x, y, 10, 20, r);
      assert.deepEqual(displayToNatural(d.x, d.y, 10, 20, r), { x, y });
    }
  }
});

test("the launcher is one window of labelled, clickable icons; tapping an icon's centre opens that app", async () => {
  const d = newDevice();
  await installPrebuilt(d, "sim_notes.apk");
  const screen = d.system.accessibility.snapshot();
  assert.equal(screen.windows.length, 1);
  const [win] = screen.windows;
  assert.equal(win!.packageName, "com.android.launcher3");
  assert.ok(win!.active && win!.focused);
  const icon = win!.nodes.find((n) => n.text === "Sim Notes");
  assert.ok(icon, "an icon labelled Sim Notes");
  assert.ok(icon.clickable);
  assert.equal(icon.resourceId, "com.android.launcher3:id/icon");
  const x = Math.floor((icon.bounds.left + icon.bounds.right) / 2);
  const y = Math.floor((icon.bounds.top + icon.bounds.bottom) / 2);
  assert.equal(d.system.accessibility.nodeAt(x, y)?.uniqueId, icon.uniqueId);
  await sh(d, `input tap ${x} ${y}`);
  assert.match(d.currentActivity(), /^com\.farm\.simapps\.notes\//);
});

test("ids stay while a view lives; rotation turns bounds with the display", async () => {
  const d = newDevice();
  await installPrebuilt(d, "sim_notes.apk");
  const before = d.system.accessibility.snapshot().windows[0]!.nodes;
  const again = d.system.accessibility.snapshot().windows[0]!.nodes;
  assert.deepEqual(again.map((n) => n.uniqueId), before.map((n) => n.uniqueId));
  await sh(d, "settings put system accelerometer_rotation 0");
  await sh(d, "settings put system user_rotation 1");
  const rotated = d.system.accessibility.snapshot();
  assert.equal(rotated.rotation, 1);
  const root = rotated.windows[0]!.nodes[0]!;
  assert.deepEqual(root.bounds, { left: 0, top: 0, right: 640, bottom: 360 });
  const icon = rotated.windows[0]!.nodes.find((n) => n.text === "Sim Notes")!;
  const x = Math.floor((icon.bounds.left + icon.bounds.right) / 2);
  const y = Math.floor((icon.bounds.top + icon.bounds.bottom) / 2);
  await sh(d, `input tap ${x} ${y}`);
  assert.match(d.currentActivity(), /^com\.farm\.simapps\.notes\//);
});
