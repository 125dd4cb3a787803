import { test } from "node:test";
import assert from "node:assert/strict";
import { rlMessages, sh } from "./android-helpers.ts";
import { act, byDesc, byId, byText, centre, focusedField, startApp, tapNode, TODO, top, typeOnKeyboard } from "./android-apps-ui-helpers.ts";
import type { SimAndroid } from "../src/android/index.ts";

const start = (config = "{}"): Promise<SimAndroid> => startApp("todo.apk", TODO, config);
const titles = (d: SimAndroid): string[] => top(d).filter((n) => n.resourceId.endsWith(":id/note_title")).map((n) => n.text);

async function rotated(rotation: number): Promise<SimAndroid> {
  const d = await start();
  await sh(d, "settings put system accelerometer_rotation 0");
  await sh(d, `settings put system user_rotation ${rotation}`);
  return d;
}

for (const rotation of [0, 1, 3]) test(`every clickable node of the list, tapped at its centre, does what its text or description says (rotation ${rotation})`, async () => {
  const probe = await rotated(rotation);
  assert.equal(probe.system.accessibility.snapshot().rotation, rotation);
  const clickable = top(probe).filter((n) => n.clickable);
  probe.close();
  assert.ok(clickable.length >= 26, `8 rows of 3 + search + new note: ${clickable.length}`);
  for (const n of clickable) {
    const d = await rotated(rotation);
    await tapNode(d, n);
    const what = n.text || n.contentDescription || n.resourceId;
    if (n.contentDescription.startsWith("Done: ")) {
      assert.equal(byDesc(d, n.contentDescription).checked, true, what);
    } else if (n.contentDescription.startsWith("Delete ")) {
      assert.equal(d.system.accessibility.snapshot().windows.length, 2, what);
      assert.match(byId(d, "message").text, new RegExp(n.contentDescription.slice("Delete ".length)));
    } else if (n.resourceId.endsWith(":id/note_title")) {
      assert.equal(byId(d, "title_input").text, n.text, what);
      assert.equal(byId(d, "toolbar_title").text, "Edit note");
    } else if (n.resourceId.endsWith(":id/search")) {
      assert.equal(focusedField(d)?.resourceId, n.resourceId, what);
      assert.ok(byId(d, "keyboard"), "the keyboard shows");
    } else if (n.text === "NEW NOTE") {
      assert.equal(byId(d, "toolbar_title").text, "New note");
      assert.equal(focusedField(d)?.hintText, "Title", "the title field has focus");
    } else {
      assert.fail(`unexpected clickable node ${what}`);
    }
    d.close();
  }
});

test("every key of the on-screen keyboard types what it shows; DEL deletes; the cursor stays at the end", async () => {
  const d = await start();
  await tapNode(d, byText(d, "NEW NOTE"));
  const keys = top(d).filter((n) => n.className.endsWith("Keyboard$Key") && n.text.length === 1);
  assert.equal(keys.length, 38);
  let expected = "";
  for (const k of keys) {
    await tapNode(d, k);
    expected = (expected + k.text).slice(0, 200);
  }
  const field = byId(d, "title_input");
  assert.equal(field.text, expected);
  assert.deepEqual([field.textSelectionStart, field.textSelectionEnd], [expected.length, expected.length]);
  await tapNode(d, byDesc(d, "Delete"));
  await sh(d, "input keyevent KEYCODE_DEL");
  assert.equal(byId(d, "title_input").text, expected.slice(0, -2));
  await tapNode(d, byDesc(d, "Space"));
  assert.equal(byId(d, "title_input").text, `${expected.slice(0, -2)} `);
  d.close();
});

test("create a note: focus by tap, input text, KEYCODE_DEL, ENTER to the body, clear button, hint while empty, SAVE; reward and episode end", async () => {
  const d = await start('{"title": "milk", "body": "2 litres"}');
  await tapNode(d, byText(d, "NEW NOTE"));
  assert.equal(byText(d, "SAVE").enabled, false, "SAVE waits for a title");
  await sh(d, "input text milkk");
  await sh(d, "input keyevent KEYCODE_DEL");
  assert.equal(byId(d, "title_input").text, "milk");
  assert.equal(byId(d, "title_input").textSelectionStart, 4);
  await sh(d, "input keyevent KEYCODE_ENTER");
  assert.equal(focusedField(d)?.resourceId, byId(d, "body_input").resourceId, "ENTER moves to the body");
  assert.equal(byId(d, "body_input").hintText, "Note");
  await sh(d, "input text wrong");
  await tapNode(d, byDesc(d, "Clear note"));
  assert.equal(byId(d, "body_input").text, "");
  await sh(d, "input text 2%slitres");
  await sh(d, "input keyevent KEYCODE_ENTER");
  assert.equal(focusedField(d), undefined, "ENTER in the body hides the keyboard");
  assert.equal(top(d).some((n) => n.resourceId.endsWith(":id/keyboard")), false);
  await tapNode(d, byText(d, "SAVE"));
  assert.equal(titles(d)[0], "milk", "the new note heads the list");
  assert.deepEqual(await rlMessages(d), ['json_extra: {"notes": 13, "done": 0}', "reward: 1", "episode end"]);
  assert.deepEqual((d.appState() as { notes: { title: string; body: string }[] }).notes[0], { id: 13, title: "milk", body: "2 litres", done: false });
  d.close();
});

test("the list scrolls by swipe and by the accessibility scroll actions; rows off screen are not reported", async () => {
  const d = await start();
  const first = titles(d);
  assert.equal(first.length, 8);
  assert.ok(!first.includes("Walk dog"));
  await sh(d, "input swipe 180 500 180 200");
  const after = titles(d);
  assert.ok(after.includes("Walk dog"), `after a swipe: ${after.join(", ")}`);
  assert.ok(!after.includes("Buy bread"));
  assert.equal(act(d, byId(d, "notes"), "scroll_backward"), true);
  assert.deepEqual(titles(d), first);
  assert.equal(act(d, byId(d, "notes"), "scroll_backward"), false, "already at the top");
  assert.equal(act(d, byId(d, "notes"), "scroll_forward"), true);
  assert.ok(titles(d).includes("Walk dog"));
  await tapNode(d, byDesc(d, "Done: Walk dog"));
  assert.equal(byDesc(d, "Done: Walk dog").checked, true);
  d.close();
});

test("deleting asks in a dialog, a second window; CANCEL, BACK and a tap outside keep the note, DELETE removes it", async () => {
  const d = await start('{"goal": "delete", "title": "Call mom"}');
  for (const dismiss of ["CANCEL", "BACK", "outside"]) {
    await tapNode(d, byDesc(d, "Delete Call mom"));
    const screen = d.system.accessibility.snapshot();
    assert.equal(screen.windows.length, 2);
    assert.ok(screen.windows[1]!.active && !screen.windows[0]!.active);
    assert.equal(byId(d, "alertTitle").text, "Delete note?");
    if (dismiss === "CANCEL") await tapNode(d, byText(d, "CANCEL"));
    else if (dismiss === "BACK") await sh(d, "input keyevent KEYCODE_BACK");
    else await sh(d, "input tap 180 30");
    assert.equal(d.system.accessibility.snapshot().windows.length, 1, dismiss);
    assert.ok(titles(d).includes("Call mom"), dismiss);
  }
  assert.match(d.currentActivity(), /com\.farm\.simapps\.todo/, "BACK closed the dialog, not the app");
  await tapNode(d, byDesc(d, "Delete Call mom"));
  await tapNode(d, byText(d, "DELETE"));
  assert.ok(!titles(d).includes("Call mom"));
  assert.deepEqual(await rlMessages(d), ['json_extra: {"notes": 11, "done": 0}', "reward: 1", "episode end"]);
  d.close();
});

test("search filters as typed; the clear button and set_text bring the list back", async () => {
  const d = await start();
  await tapNode(d, byId(d, "search"));
  await typeOnKeyboard(d, "dog");
  assert.deepEqual(titles(d), ["Walk dog"]);
  await tapNode(d, byDesc(d, "Clear search"));
  assert.equal(titles(d).length, 4, "the list sits above the keyboard while it shows");
  assert.equal(act(d, byId(d, "search"), "set_text", "zzz"), true);
  assert.deepEqual(titles(d), []);
  assert.equal(byId(d, "empty").text, "No notes found");
  await sh(d, "input keyevent KEYCODE_BACK");
  assert.equal(focusedField(d), undefined, "BACK hides the keyboard first");
  act(d, byId(d, "search"), "set_text", "");
  assert.equal(titles(d).length, 8);
  d.close();
});

test("edit a note: Up and BACK discard, SAVE keeps; check goal; BACK on the list leaves the app", async () => {
  const d = await start('{"goal": "check", "title": "Pay rent"}');
  await tapNode(d, byText(d, "Pay rent"));
  await tapNode(d, byId(d, "title_input"));
  await sh(d, "input text %sbill");
  await tapNode(d, byDesc(d, "Navigate up"));
  assert.ok(titles(d).includes("Pay rent"), "Up discards");
  await tapNode(d, byText(d, "Pay rent"));
  await tapNode(d, byId(d, "title_input"));
  await sh(d, "input text %sbill");
  await sh(d, "input keyevent KEYCODE_BACK");
  await sh(d, "input keyevent KEYCODE_BACK");
  assert.ok(titles(d).includes("Pay rent"), "BACK (keyboard, then editor) discards");
  await tapNode(d, byText(d, "Pay rent"));
  await tapNode(d, byId(d, "title_input"));
  await sh(d, "input text %sbill");
  await tapNode(d, byText(d, "SAVE"));
  assert.ok(titles(d).includes("Pay rent bill"));
  await tapNode(d, byDesc(d, "Done: Buy bread"));
  assert.deepEqual(await rlMessages(d), ['json_extra: {"notes": 12, "done": 0}', 'json_extra: {"notes": 12, "done": 1}']);
  await tapNode(d, byText(d, "Pay rent bill"));
  await tapNode(d, byText(d, "DELETE"));
  await tapNode(d, byText(d, "DELETE"));
  assert.equal(byId(d, "toolbar_title").text, "Todo", "deleting from the editor returns to the list");
  await sh(d, "input keyevent KEYCODE_BACK");
  assert.match(d.currentActivity(), /launcher3/);
  d.close();
});

test("rotated (user_rotation 1), tapping each node's centre still presses it; typing changes the tree", async () => {
  const d = await start();
  await sh(d, "settings put system accelerometer_rotation 0");
  await sh(d, "settings put system user_rotation 1");
  assert.equal(d.system.accessibility.snapshot().rotation, 1);
  const n = byText(d, "NEW NOTE");
  assert.ok(n.bounds.right - n.bounds.left < n.bounds.bottom - n.bounds.top, "the wide button stands upright on the turned display");
  await tapNode(d, n);
  assert.equal(byId(d, "toolbar_title").text, "New note");
  await typeOnKeyboard(d, "eggs");
  assert.equal(byId(d, "title_input").text, "eggs");
  const [x, y] = centre(byText(d, "SAVE"));
  assert.equal(d.system.accessibility.nodeAt(x, y)?.text, "SAVE");
  await tapNode(d, byText(d, "SAVE"));
  assert.equal(titles(d)[0], "eggs");
  d.close();
});

test("the app's state is part of a device snapshot: save, change, load", async () => {
  const d = await start();
  await tapNode(d, byText(d, "NEW NOTE"));
  await sh(d, "input text milk");
  const saved = d.system.saveState();
  const before = d.appState();
  await tapNode(d, byText(d, "SAVE"));
  await tapNode(d, byDesc(d, "Done: Buy bread"));
  assert.notDeepEqual(d.appState(), before);
  d.system.restoreState(saved);
  assert.deepEqual(d.appState(), before);
  assert.equal(byId(d, "title_input").text, "milk");
  assert.equal(focusedField(d)?.resourceId, byId(d, "title_input").resourceId);
  d.close();
});

test("accessibility actions: only what a node offers is carried out (disabled SAVE, set_text on a label, an unknown key)", async () => {
  const d = await start();
  await tapNode(d, byText(d, "NEW NOTE"));
  const save = byText(d, "SAVE");
  assert.deepEqual(save.actions, [], "a disabled button offers no action");
  assert.equal(act(d, save, "click"), false);
  assert.equal(act(d, byId(d, "toolbar_title"), "set_text", "x"), false);
  assert.equal(act(d, { ...save, viewKey: "no/such/view" }, "click"), false);
  assert.equal(act(d, byId(d, "title_input"), "set_text", "x".repeat(500)), true);
  assert.equal(byId(d, "title_input").text.length, 200, "a field holds at most 200 characters");
  assert.equal(act(d, byText(d, "SAVE"), "focus"), true);
  assert.equal(byId(d, "toolbar_title").text, "New note", "focusing a button does not press it");
  assert.equal(act(d, byText(d, "SAVE"), "click"), true);
  assert.equal(titles(d)[0], "x".repeat(200));
  d.close();
});

test("a create goal counts a note the agent saves, not a sample note that already has the title", async () => {
  const d = await start('{"title": "buy bread"}');
  await tapNode(d, byDesc(d, "Done: Buy bread"));
  assert.deepEqual(await rlMessages(d), ['json_extra: {"notes": 12, "done": 1}']);
  await tapNode(d, byText(d, "Buy bread"));
  await tapNode(d, byText(d, "SAVE"));
  assert.deepEqual((await rlMessages(d)).slice(1), ['json_extra: {"notes": 12, "done": 1}', "reward: 1", "episode end"]);
  d.close();
});
