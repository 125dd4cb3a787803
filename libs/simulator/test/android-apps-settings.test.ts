import { test } from "node:test";
import assert from "node:assert/strict";
import { rlMessages, sh } from "./android-helpers.ts";
import { act, byDesc, byId, byText, focusedField, SETTINGS, startApp, tapNode, top } from "./android-apps-ui-helpers.ts";
import type { SimAndroid } from "../src/android/index.ts";

const start = (config = "{}"): Promise<SimAndroid> => startApp("sim_settings.apk", SETTINGS, config);
const title = (d: SimAndroid): string => byId(d, "toolbar_title").text;

async function open(d: SimAndroid, path: string[]): Promise<void> {
  for (const p of path) await tapNode(d, byText(d, p));
}

const SCREENS: { path: string[]; title: string }[] = [
  { path: [], title: "Sim Settings" },
  { path: ["Network & internet"], title: "Network & internet" },
  { path: ["Network & internet", "Internet"], title: "Internet" },
  { path: ["Connected devices"], title: "Connected devices" },
  { path: ["Display"], title: "Display" },
  { path: ["Display", "Font size"], title: "Font size" },
  { path: ["Security"], title: "Security" },
  { path: ["System"], title: "System" },
];

test("on every screen, every clickable node tapped at its centre does what its text or description says", async () => {
  let tapped = 0;
  for (const screen of SCREENS) {
    const probe = await start();
    await open(probe, screen.path);
    assert.equal(title(probe), screen.title);
    const clickable = top(probe).filter((n) => n.clickable && n.enabled);
    probe.close();
    for (const n of clickable) {
      const d = await start();
      await open(d, screen.path);
      await tapNode(d, n);
      tapped++;
      const what = `${screen.title}: ${n.text || n.contentDescription}`;
      if (n.checkable) {
        assert.equal(byText(d, n.text).checked, n.className.endsWith("RadioButton") ? true : !n.checked, what);
      } else if (n.contentDescription === "Navigate up") {
        assert.equal(title(d), SCREENS.find((s) => s.path.join("/") === screen.path.slice(0, -1).join("/"))!.title, what);
      } else if (n.text === "Reset options") {
        assert.equal(d.system.accessibility.snapshot().windows.length, 2, what);
        assert.equal(byId(d, "alertTitle").text, "Reset all settings?");
      } else if (n.text === "DIMMER" || n.text === "BRIGHTER") {
        assert.ok(byText(d, n.text === "DIMMER" ? "Brightness level: 40/100" : "Brightness level: 60/100"), what);
      } else if (n.editable) {
        assert.equal(focusedField(d)?.resourceId, n.resourceId, what);
      } else {
        assert.equal(title(d), n.text, `${what} opens its screen`);
      }
      d.close();
    }
  }
  assert.ok(tapped >= 25, `tapped ${tapped}`);
});

test("turn on Wi-Fi two screens deep: json_extra, reward 1 and episode end; its networks appear", async () => {
  const d = await start('{"toggle": "wifi", "on": true}');
  await open(d, ["Network & internet", "Internet"]);
  assert.equal(byText(d, "Wi-Fi").checked, false);
  assert.equal(top(d).some((n) => n.text === "FarmNet"), false);
  await tapNode(d, byText(d, "Wi-Fi"));
  assert.equal(byText(d, "Wi-Fi").checked, true);
  assert.ok(byText(d, "FarmNet"));
  await tapNode(d, byText(d, "Wi-Fi"));
  assert.deepEqual(await rlMessages(d), ['json_extra: {"wifi": 1}', "reward: 1", "episode end", 'json_extra: {"wifi": 0}']);
  d.close();
});

test("Up and BACK pop one screen; BACK on the first screen leaves the app", async () => {
  const d = await start();
  await open(d, ["Display", "Font size"]);
  await sh(d, "input keyevent KEYCODE_BACK");
  assert.equal(title(d), "Display");
  await tapNode(d, byDesc(d, "Navigate up"));
  assert.equal(title(d), "Sim Settings");
  assert.equal(top(d).some((n) => n.contentDescription === "Navigate up"), false, "no Up on the first screen");
  await sh(d, "input keyevent KEYCODE_BACK");
  assert.match(d.currentActivity(), /launcher3/);
  d.close();
});

test("nested goal: Display, Font size, Large (radio buttons); brightness buttons stop at their ends", async () => {
  const d = await start('{"font_size": "large"}');
  await open(d, ["Display"]);
  for (let i = 0; i < 7; i++) await tapNode(d, byText(d, "BRIGHTER"));
  assert.ok(byText(d, "Brightness level: 100/100"));
  await tapNode(d, byText(d, "Font size"));
  await tapNode(d, byText(d, "Small"));
  await tapNode(d, byText(d, "Large"));
  const radios = top(d).filter((n) => n.className === "android.widget.RadioButton");
  assert.deepEqual(radios.map((n) => n.checked), [false, false, true, false]);
  assert.deepEqual((await rlMessages(d)).slice(-5), ['json_extra: {"brightness": 100}', 'json_extra: {"font_size": 0}', 'json_extra: {"font_size": 2}', "reward: 1", "episode end"]);
  d.close();
});

test("the reset dialog is a second window; RESET puts switches back, CANCEL does not", async () => {
  const d = await start();
  await tapNode(d, byText(d, "Battery saver"));
  await tapNode(d, byText(d, "Reset options"));
  await tapNode(d, byText(d, "CANCEL"));
  assert.equal(byText(d, "Battery saver").checked, true);
  await tapNode(d, byText(d, "Reset options"));
  const screen = d.system.accessibility.snapshot();
  assert.equal(screen.windows.length, 2);
  assert.equal(screen.windows[1]!.nodes.find((n) => n.text === "RESET")?.resourceId, "android:id/button1");
  await sh(d, "input tap 180 600");
  assert.equal(d.system.accessibility.snapshot().windows.length, 1, "a tap outside cancels the dialog");
  assert.equal(title(d), "Sim Settings", "the row under the tap (System) was not pressed");
  await tapNode(d, byText(d, "Reset options"));
  await tapNode(d, byText(d, "RESET"));
  assert.equal(d.system.accessibility.snapshot().windows.length, 1);
  assert.equal(byText(d, "Battery saver").checked, false);
  assert.deepEqual(await rlMessages(d), ['json_extra: {"battery_saver": 1}', 'json_extra: {"reset": 1}']);
  d.close();
});

test("password field: reported as password with hidden text; SAVE is disabled until 4 characters", async () => {
  const d = await start('{"password_set": true}');
  await open(d, ["Security"]);
  await tapNode(d, byId(d, "password"));
  await sh(d, "input text abc");
  const field = byId(d, "password");
  assert.equal(field.password, true);
  assert.equal(field.text, "•••");
  assert.equal(byText(d, "SAVE").enabled, false);
  await tapNode(d, byText(d, "SAVE"));
  assert.deepEqual(await rlMessages(d), []);
  await sh(d, "input text d");
  assert.equal(byText(d, "SAVE").enabled, true);
  await sh(d, "input keyevent KEYCODE_ENTER");
  assert.ok(byText(d, "Screen lock: password"));
  assert.deepEqual(await rlMessages(d), ['json_extra: {"password_set": 1}', "reward: 1", "episode end"]);
  d.close();
});

test("the first screen's list is longer than the screen: swipe and scroll_forward show the rest", async () => {
  const d = await start();
  const shown = (): string[] => top(d).filter((n) => n.text !== "" && n.resourceId !== "com.farm.simapps.settings:id/toolbar_title").map((n) => n.text);
  assert.ok(!shown().includes("Build SIM.14"));
  await sh(d, "input swipe 180 600 180 300");
  assert.ok(shown().includes("Build SIM.14"), shown().join(", "));
  assert.ok(!shown().includes("Network & internet"));
  assert.equal(act(d, byId(d, "recycler_view"), "scroll_backward"), true);
  assert.ok(shown().includes("Network & internet"));
  assert.equal(act(d, byId(d, "recycler_view"), "scroll_forward"), true);
  assert.ok(shown().includes("Build SIM.14"));
  d.close();
});

test("rotated, tap-at-centre reaches Wi-Fi; accessibility click does too; state survives a snapshot load", async () => {
  const d = await start('{"toggle": "bluetooth", "on": true}');
  await sh(d, "settings put system accelerometer_rotation 0");
  await sh(d, "settings put system user_rotation 1");
  await open(d, ["Network & internet", "Internet", "Wi-Fi"]);
  assert.equal(byText(d, "Wi-Fi").checked, true);
  const saved = d.system.saveState();
  const before = d.appState();
  await sh(d, "input keyevent KEYCODE_BACK");
  await sh(d, "input keyevent KEYCODE_BACK");
  await tapNode(d, byText(d, "Connected devices"));
  assert.equal(act(d, byText(d, "Bluetooth"), "click"), true);
  assert.equal(byText(d, "Bluetooth").checked, true);
  assert.deepEqual((await rlMessages(d)).slice(-3), ['json_extra: {"bluetooth": 1}', "reward: 1", "episode end"]);
  d.system.restoreState(saved);
  assert.deepEqual(d.appState(), before);
  assert.equal(title(d), "Internet");
  assert.equal(byText(d, "Wi-Fi").checked, true);
  d.close();
});

test("drawing follows the tree: toggling a switch changes pixels only inside that switch's bounds", async () => {
  const d = await start();
  const frame = (): Uint8Array => new Uint8Array(d.framebuffer().rgba);
  const before = frame();
  const n = byText(d, "Battery saver");
  await tapNode(d, n);
  const after = frame();
  let changed = 0;
  for (let p = 0; p < before.length; p += 4) {
    if (before[p] === after[p] && before[p + 1] === after[p + 1] && before[p + 2] === after[p + 2]) continue;
    changed++;
    const x = (p / 4) % 360;
    const y = Math.floor(p / 4 / 360);
    assert.ok(x >= n.bounds.left && x < n.bounds.right && y >= n.bounds.top && y < n.bounds.bottom, `pixel ${x},${y} changed outside ${JSON.stringify(n.bounds)}`);
  }
  assert.ok(changed > 50, `the switch was redrawn (${changed} pixels)`);
  d.close();
});

test("a goal that holds from the start is reached only by a change of that setting", async () => {
  const d = await start('{"toggle": "wifi", "on": false}');
  await tapNode(d, byText(d, "Battery saver"));
  assert.deepEqual(await rlMessages(d), ['json_extra: {"battery_saver": 1}']);
  await open(d, ["Network & internet", "Internet", "Wi-Fi", "Wi-Fi"]);
  assert.deepEqual((await rlMessages(d)).slice(1), ['json_extra: {"wifi": 1}', 'json_extra: {"wifi": 0}', "reward: 1", "episode end"]);
  d.close();
});
