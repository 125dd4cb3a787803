/** The toolkit apps from the launcher (opened by their label) and under bad RL_TASK_GAME_CONFIG. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { installPrebuilt, newDevice, rlMessages, sh } from "./android-helpers.ts";
import { act, byId, byText, focusedField, SETTINGS, startApp, tapNode, TODO } from "./android-apps-ui-helpers.ts";

test("Todo and Sim Settings have labelled launcher icons; tapping the label's centre opens the app (no RL lines)", async () => {
  const d = newDevice();
  await installPrebuilt(d, "todo.apk");
  await installPrebuilt(d, "sim_settings.apk");
  for (const [label, component] of [["Todo", TODO], ["Sim Settings", SETTINGS]] as const) {
    await sh(d, "input keyevent KEYCODE_HOME");
    const icon = byText(d, label);
    assert.ok(icon.clickable);
    await tapNode(d, icon);
    assert.equal(d.currentActivity(), component);
    assert.equal(byId(d, "toolbar_title").text, label === "Todo" ? "Todo" : "Sim Settings");
  }
  await tapNode(d, byText(d, "Battery saver"));
  assert.deepEqual(await rlMessages(d), [], "started without RL_TASK_ENABLED");
  d.close();
});

test("a config that names no goal (wrong types, unknown names, __proto__) runs the app with no reward", async () => {
  for (const [apk, component, config, tap] of [
    ["todo.apk", TODO, '{"title": 5, "goal": "check", "prefill": "x"}', "Done: Buy bread"],
    ["todo.apk", TODO, '{"goal": "__proto__", "title": "Buy bread", "body": 1}', "Done: Buy bread"],
    ["sim_settings.apk", SETTINGS, '{"toggle": "__proto__", "on": true}', "Battery saver"],
    ["sim_settings.apk", SETTINGS, '{"font_size": "huge", "brightness": "max"}', "Battery saver"],
    ["sim_settings.apk", SETTINGS, "[1, 2]", "Battery saver"],
  ] as const) {
    const d = await startApp(apk, component, config);
    const n = d.system.accessibility.snapshot().windows[0]!.nodes.find((x) => x.text === tap || x.contentDescription === tap)!;
    await tapNode(d, n);
    const lines = await rlMessages(d);
    assert.ok(!lines.includes("reward: 1"), `${config}: ${lines.join(" | ")}`);
    assert.match(lines.at(-1) ?? "", /^json_extra: /, config);
    d.close();
  }
});

test("a long press (accessibility long_click) on a field focuses it", async () => {
  const d = await startApp("todo.apk", TODO);
  assert.equal(act(d, byId(d, "search"), "long_click"), true);
  assert.equal(focusedField(d)?.resourceId, "com.farm.simapps.todo:id/search");
  d.close();
});
