/**
 * Accessibility events as input and window changes produce them (what the forwarder sends), on a
 * test app with an editable field and a list that scrolls: typed text and DEL are text changes with
 * the edit's indices, a swipe over the list is a scroll, a new app in front a window-state change,
 * and the forwarder's string map carries the keys the real app fills.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Accessibility, type A11yEvent } from "../src/android/system/accessibility.ts";
import { InputDispatcher, textChange } from "../src/android/system/input-dispatcher.ts";
import { eventMap } from "../src/android/forwarder/forest.ts";
import type { ActivityManager } from "../src/android/system/activity-manager.ts";
import type { PackageManager } from "../src/android/system/package-manager.ts";
import type { FaultInjector } from "../src/android/system/faults.ts";
import type { ViewNode } from "../src/android/app-contract.ts";

const KEYCODE_DEL = 67;

function rig() {
  const state = { text: "", offset: 0, pid: 4000 };
  const app = {
    viewHierarchy: (): ViewNode => ({
      cls: "android.widget.LinearLayout",
      bounds: [0, 0, 360, 640],
      desc: "Main screen",
      children: [
        { cls: "android.widget.EditText", id: "app:id/field", bounds: [0, 0, 360, 100], editable: true, focusable: true, focused: true, clickable: true, text: state.text },
        {
          cls: "android.widget.ListView",
          id: "app:id/list",
          bounds: [0, 100, 360, 640],
          scrollable: true,
          children: Array.from({ length: 5 }, (_, i) => ({ cls: "android.widget.TextView", key: `item${i + state.offset}`, text: `Item ${i + state.offset}`, bounds: [0, 100 + i * 100, 360, 200 + i * 100] as [number, number, number, number] })),
        },
      ],
    }),
    onText: (t: string) => void (state.text += t),
    onKey: (k: number) => void (k === KEYCODE_DEL && (state.text = state.text.slice(0, -1))),
    onTap: () => {},
    onSwipe: (_x1: number, y1: number, _x2: number, y2: number) => void (y2 < y1 && (state.offset += 3)),
    onTouch: () => {},
  };
  const proc = { app, get pid() { return state.pid; }, pkg: { name: "com.test.app", label: "Test App" }, packageName: "com.test.app", guard: (fn: () => void) => fn() };
  const changeListeners: (() => void)[] = [];
  const am = {
    foregroundProcess: () => proc,
    onChange: (l: () => void) => void changeListeners.push(l),
    currentComponent: () => ({ packageName: "com.test.app", className: "com.test.app.MainActivity" }),
    refreshTicking: () => {},
  } as unknown as ActivityManager;
  let t = 1000;
  const a11y = new Accessibility(am, {} as PackageManager, { width: 360, height: 640 }, () => 0, () => (t += 5));
  const input = new InputDispatcher(am, {} as PackageManager, { shouldDropInput: () => false } as unknown as FaultInjector, { width: 360, height: 640 }, () => 0, a11y);
  const events: A11yEvent[] = [];
  a11y.onEvent((e) => events.push(e));
  const windowChanged = (): void => changeListeners.forEach((l) => l());
  return { a11y, input, events, state, windowChanged };
}

test("typing into the focused field is a text change with the edit's indices; DEL too", () => {
  const { input, events } = rig();
  input.text("hello");
  const typed = events.find((e) => e.type === "TYPE_VIEW_TEXT_CHANGED");
  assert.ok(typed);
  assert.equal(typed.source?.resourceId, "com.test.app:id/field");
  assert.deepEqual(typed.text, ["hello"]);
  assert.deepEqual([typed.beforeText, typed.fromIndex, typed.addedCount, typed.removedCount], ["", 0, 5, 0]);
  assert.ok(events.some((e) => e.type === "TYPE_WINDOW_CONTENT_CHANGED"), "the tree changed too");
  events.length = 0;
  input.key(KEYCODE_DEL);
  const del = events.find((e) => e.type === "TYPE_VIEW_TEXT_CHANGED");
  assert.deepEqual([del?.beforeText, del?.fromIndex, del?.addedCount, del?.removedCount, del?.text], ["hello", 4, 0, 1, ["hell"]]);
});

test("a key that changes nothing sends no text change", () => {
  const { input, events } = rig();
  input.key(KEYCODE_DEL); // the field is empty
  assert.deepEqual(events.map((e) => e.type), []);
});

test("a swipe up over the list is a scroll (content moved towards the end) and shows other items", async () => {
  const { input, events, a11y } = rig();
  const before = a11y.snapshot().windows[0]!.nodes.filter((n) => n.text.startsWith("Item ")).map((n) => n.text);
  await input.swipe(180, 500, 180, 200);
  const scrolled = events.find((e) => e.type === "TYPE_VIEW_SCROLLED");
  assert.ok(scrolled);
  assert.equal(scrolled.source?.className, "android.widget.ListView");
  assert.equal(scrolled.scrollDeltaY, 300);
  assert.ok(events.some((e) => e.type === "TYPE_WINDOW_CONTENT_CHANGED"));
  const after = a11y.snapshot().windows[0]!.nodes.filter((n) => n.text.startsWith("Item ")).map((n) => n.text);
  assert.notDeepEqual(after, before);
  const map = eventMap(scrolled, a11y.snapshot());
  assert.equal(map?.get("scroll_delta_y"), "300");
  assert.equal(map?.get("scroll_delta_x"), "0");
});

test("a tap on a clickable node is a click about it; on nothing clickable, no click", () => {
  const { input, events } = rig();
  input.tap(50, 50);
  assert.equal(events[0]?.type, "TYPE_VIEW_CLICKED");
  assert.equal(events[0]?.source?.resourceId, "com.test.app:id/field");
  events.length = 0;
  input.tap(50, 350); // a list item, not clickable
  assert.ok(!events.some((e) => e.type === "TYPE_VIEW_CLICKED"));
});

test("another app in front is a window-state change naming its activity; nothing changed, no event", () => {
  const { events, state, windowChanged } = rig();
  windowChanged();
  assert.equal(events.length, 0);
  state.pid = 4001;
  windowChanged();
  assert.equal(events.length, 1);
  assert.equal(events[0]!.type, "TYPE_WINDOW_STATE_CHANGED");
  assert.equal(events[0]!.className, "com.test.app.MainActivity");
  assert.deepEqual(events[0]!.text, ["Test App"]);
});

test("the forwarder's event map: the real app's keys, empty ones left out, descriptions of the ancestors joined", () => {
  const { input, events, a11y } = rig();
  input.text("ab");
  const map = eventMap(events.find((e) => e.type === "TYPE_VIEW_TEXT_CHANGED")!, a11y.snapshot())!;
  assert.deepEqual([...map.keys()], ["source_content_description", "event_text", "source_text", "event_type", "source_class_name", "event_package_name", "from_index", "added_count", "removed_count", "view_id", "event_timestamp_ms"]);
  assert.equal(map.get("source_content_description"), "Main screen");
  assert.equal(map.get("event_type"), "TYPE_VIEW_TEXT_CHANGED");
  assert.equal(map.get("view_id"), "com.test.app:id/field");
  assert.equal(map.has("before_text"), false, "an empty before-text is left out, as the app does");
  assert.match(map.get("event_timestamp_ms")!, /^\d+$/);
});

test("textChange finds the edit between common prefix and suffix", () => {
  assert.deepEqual(textChange("hello", "help"), { beforeText: "hello", fromIndex: 3, addedCount: 1, removedCount: 2 });
  assert.deepEqual(textChange("abc", "abXc"), { beforeText: "abc", fromIndex: 2, addedCount: 1, removedCount: 0 });
  assert.deepEqual(textChange("aaa", "aa"), { beforeText: "aaa", fromIndex: 2, addedCount: 0, removedCount: 1 });
  assert.deepEqual(textChange("", ""), { beforeText: "", fromIndex: 0, addedCount: 0, removedCount: 0 });
});
