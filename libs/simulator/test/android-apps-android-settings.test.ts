/**
 * Android's Settings app (`com.android.settings`, a system app): Sim Settings' screens over the settings
 * provider. What `svc` / `settings put` write shows in the app at once, and the app's taps show in `settings get`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { newDevice, sh } from "./android-helpers.ts";
import { byDesc, byId, byText, centre, tapNode, top } from "./android-apps-ui-helpers.ts";
import type { SimAndroid } from "../src/android/index.ts";
import { SETTINGS_ACTIVITIES } from "../src/apps/sim-settings.ts";

const MAIN = "com.android.settings/.Settings";

async function start(d: SimAndroid = newDevice(), component = MAIN): Promise<SimAndroid> {
  const r = await sh(d, `am start -S -W -n '${component}'`);
  assert.equal(r.code, 0, r.out + r.err);
  return d;
}

async function open(d: SimAndroid, path: string[]): Promise<void> {
  for (const p of path) await tapNode(d, byText(d, p));
}

const get = async (d: SimAndroid, ns: string, key: string): Promise<string> => (await sh(d, `settings get ${ns} ${key}`)).out.trim();

test("defaults as an emulator image has them: wifi_on 1, bluetooth_on 0 (not null), brightness 102, mobile data on", async () => {
  const d = newDevice();
  assert.deepEqual(
    await Promise.all([get(d, "global", "wifi_on"), get(d, "global", "bluetooth_on"), get(d, "global", "airplane_mode_on"), get(d, "system", "screen_brightness"), get(d, "global", "mobile_data")]),
    ["1", "0", "0", "102", "1"],
  );
  d.close();
});

test("com.android.settings is a system app with a launcher icon and the intent filters of android.settings.SETTINGS and friends", async () => {
  const d = newDevice();
  const pkg = d.system.packages.get("com.android.settings");
  assert.ok(pkg?.system);
  assert.equal(pkg.activities[0], "com.android.settings.Settings");
  assert.deepEqual(d.system.packages.queryIntentActivities("android.settings.SETTINGS"), [{ packageName: "com.android.settings", className: "com.android.settings.Settings" }]);
  assert.deepEqual(d.system.packages.queryIntentActivities("android.settings.WIFI_SETTINGS"), [{ packageName: "com.android.settings", className: "com.android.settings.Settings$WifiSettingsActivity" }]);
  assert.deepEqual(d.system.packages.queryIntentActivities("android.settings.NO_SUCH"), []);
  // Every activity the package declares is one the app knows (a screen of its own).
  assert.deepEqual(pkg.activities.map((a) => a.replace("com.android.settings.", "")), SETTINGS_ACTIVITIES.map((a) => a.activity));
  // The launcher's Settings icon opens the Settings app's main list (not an empty screen).
  const icon = d.system.accessibility.snapshot().windows.at(-1)!.nodes.find((n) => n.text === "Settings");
  assert.ok(icon);
  const [x, y] = centre(icon);
  await sh(d, `input tap ${x} ${y}`);
  assert.equal(d.currentActivity(), "com.android.settings/com.android.settings.Settings");
  assert.equal(byId(d, "toolbar_title").text, "Settings");
  assert.ok(byText(d, "Network & internet"));
  d.close();
});

test("svc wifi disable before the start and settings put during it show in the app; its switch's tap shows in settings get", async () => {
  const d = newDevice();
  assert.equal((await sh(d, "svc wifi disable")).code, 0);
  await start(d);
  await open(d, ["Network & internet", "Internet"]);
  assert.equal(byText(d, "Wi-Fi").checked, false, "svc wifi disable shows as Wi-Fi off");
  assert.equal(top(d).some((n) => n.text === "FarmNet"), false);
  await tapNode(d, byText(d, "Wi-Fi"));
  assert.equal(await get(d, "global", "wifi_on"), "1");
  assert.equal(byText(d, "Wi-Fi").checked, true);
  assert.ok(byText(d, "FarmNet"), "networks listed while Wi-Fi is on");
  // A change while the app is in front shows at once.
  await sh(d, "settings put global wifi_on 0");
  assert.equal(byText(d, "Wi-Fi").checked, false);
  d.close();
});

test("every provider-backed switch writes its key as Android does; Hotspot and NFC stay in the app", async () => {
  const d = await start();
  const cases: [string[], string, string, string, string][] = [
    [["Connected devices"], "Bluetooth", "global", "bluetooth_on", "1"],
    [["Network & internet"], "Airplane mode", "global", "airplane_mode_on", "1"],
    [["Network & internet"], "Mobile data", "global", "mobile_data", "0"],
    [[], "Do not disturb", "global", "zen_mode", "1"],
    [[], "Battery saver", "global", "low_power", "1"],
    [[], "Location", "secure", "location_mode", "0"],
    [["Display"], "Dark theme", "secure", "ui_night_mode", "2"],
    [["Display"], "Adaptive brightness", "system", "screen_brightness_mode", "1"],
  ];
  for (const [path, text, ns, key, after] of cases) {
    await start(d);
    await open(d, path);
    await tapNode(d, byText(d, text));
    assert.equal(await get(d, ns, key), after, `${text} → ${ns} ${key}`);
  }
  await start(d);
  await open(d, ["Network & internet"]);
  await tapNode(d, byText(d, "Hotspot"));
  assert.equal(byText(d, "Hotspot").checked, true);
  d.close();
});

test("brightness is a slider over system screen_brightness 1..255: its ends, a level, and a value put from outside", async () => {
  const d = await start();
  await open(d, ["Display"]);
  const bar = byDesc(d, "Brightness level");
  assert.equal(bar.className, "android.widget.SeekBar");
  assert.ok(byText(d, "Brightness level: 40%"), "102 of 1..255 is 40 %");
  await sh(d, `input tap ${bar.bounds.right - 2} ${centre(bar)[1]}`);
  assert.equal(await get(d, "system", "screen_brightness"), "255");
  assert.ok(byText(d, "Brightness level: 100%"));
  await sh(d, `input tap ${bar.bounds.left + 2} ${centre(bar)[1]}`);
  assert.equal(await get(d, "system", "screen_brightness"), "1");
  // A swipe from the thumb to the middle of the track.
  await sh(d, `input swipe ${bar.bounds.left + 16} ${centre(bar)[1]} ${centre(bar)[0]} ${centre(bar)[1]}`);
  assert.equal(await get(d, "system", "screen_brightness"), "128");
  await sh(d, "settings put system screen_brightness 255");
  assert.ok(byText(d, "Brightness level: 100%"));
  d.close();
});

test("font size radio buttons write system font_scale; am start -a deep links open their screens", async () => {
  const d = await start();
  await open(d, ["Display", "Font size"]);
  await tapNode(d, byText(d, "Largest"));
  assert.equal(await get(d, "system", "font_scale"), "1.3");
  await sh(d, "settings put system font_scale 0.85");
  assert.equal(byText(d, "Small").checked, true);
  await start(d, "com.android.settings/.Settings$WifiSettingsActivity");
  assert.equal(byId(d, "toolbar_title").text, "Internet");
  assert.equal(d.currentActivity(), "com.android.settings/com.android.settings.Settings$WifiSettingsActivity");
  d.close();
});

test("a snapshot keeps the app and the provider together", async () => {
  const d = await start();
  await open(d, ["Connected devices"]);
  const saved = d.system.saveState();
  await tapNode(d, byText(d, "Bluetooth"));
  assert.equal(await get(d, "global", "bluetooth_on"), "1");
  d.system.restoreState(saved);
  assert.equal(await get(d, "global", "bluetooth_on"), "0");
  assert.equal(byText(d, "Bluetooth").checked, false);
  d.close();
});

test("the settings store tells its listeners of every change, whoever writes", async () => {
  const d = newDevice();
  const heard: string[] = [];
  const stop = d.system.settings.onChange((ns, key) => heard.push(`${ns}/${key}`));
  await sh(d, "svc wifi disable");
  await sh(d, "settings put system screen_brightness 9");
  await sh(d, "settings delete global no_such_key");
  stop();
  await sh(d, "settings put system screen_brightness 10");
  assert.deepEqual(heard, ["global/wifi_on", "system/screen_brightness"]);
  d.close();
});
