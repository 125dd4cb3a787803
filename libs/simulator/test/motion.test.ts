/**
 * Time on screen (issue 36): at `emulator-grpc` a screen change, the keyboard, a fling and a slow list
 * take time, with intermediate frames and accessibility events while they move and none after; the
 * benchmark-only ground truth says when each input's effect was complete; the animation scales at 0
 * turn the animations off; `instant` stays instant. In-process devices, as the app tests around.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { sleep } from "@farm/time";
import type { SimAndroid } from "../src/android/index.ts";
import type { A11yEvent } from "../src/android/system/accessibility.ts";
import { fileURLToPath } from "node:url";
import { APK_DIR, newDevice, rlStartLine, sh } from "./android-helpers.ts";
import { adbCli, startRig } from "./transport-helpers.ts";
import { byDesc, byId, byText, centre, startApp, tapNode, TODO, top } from "./android-apps-ui-helpers.ts";

async function todoAt(profile: "instant" | "emulator-grpc", config = '{"list_load_ms": 0}', settings: string[] = []): Promise<SimAndroid> {
  const d = newDevice();
  d.faults.setLatencyProfile(profile);
  for (const s of settings) await sh(d, `settings put global ${s}`);
  return startApp("todo.apk", TODO, config, d);
}

const frameHash = (d: SimAndroid): string => createHash("sha1").update(d.framebuffer().rgba).digest("hex");
const ticking = (d: SimAndroid): boolean => d.system.activities.foregroundProcess()?.ticking ?? false;

/** Accessibility events with the wall time each arrived. */
function listen(d: SimAndroid): { at: number; e: A11yEvent }[] {
  const out: { at: number; e: A11yEvent }[] = [];
  d.system.accessibility.onEvent((e) => out.push({ at: Date.now(), e }));
  return out;
}

/** Frames every `everyMs` for `forMs`: [time, hash]. */
async function sampleFrames(d: SimAndroid, forMs: number, everyMs = 25): Promise<[number, string][]> {
  const out: [number, string][] = [];
  const end = Date.now() + forMs;
  while (Date.now() < end) {
    out.push([Date.now(), frameHash(d)]);
    await sleep(everyMs);
  }
  return out;
}

/** The last input's record of the ground truth. */
function lastSettle(d: SimAndroid): { inputAt: number; settledAt: number } {
  const h = d.settleHistory();
  assert.ok(h.length > 0, "inputs are recorded");
  return h.at(-1)!;
}

test("emulator-grpc: a tap that opens a screen slides it in over ~300 ms: frames differ, then stay equal; events while it moves, none after; the ground truth is its end", async () => {
  const d = await todoAt("emulator-grpc");
  try {
    const events = listen(d);
    const newNote = byText(d, "NEW NOTE");
    const before = frameHash(d);
    await tapNode(d, newNote);
    const frames = await sampleFrames(d, 700);
    const truth = lastSettle(d);
    const took = truth.settledAt - truth.inputAt;
    // From the tap's arrival: 300 ms, plus the time the app took to get it on a busy machine.
    assert.ok(took >= 295 && took <= 1500, `the screen (300 ms) and keyboard (250 ms) settle 300 ms after the tap: ${took}`);
    assert.equal(d.settledAt(truth.inputAt), truth.settledAt);
    assert.equal(d.settledAt(truth.inputAt - 1) === undefined || d.settledAt(truth.inputAt - 1)! <= truth.inputAt, true, "earlier inputs settled before");
    const moving = frames.filter(([t]) => t < truth.settledAt);
    const still = frames.filter(([t]) => t >= truth.settledAt + 20);
    assert.ok(new Set(moving.map(([, h]) => h)).size >= 2, `intermediate frames while it moves: ${new Set(moving.map(([, h]) => h)).size} distinct of ${moving.length}`);
    assert.ok(still.length >= 5, "frames after it settled");
    assert.equal(new Set(still.map(([, h]) => h)).size, 1, "the frames stay equal once it settled");
    assert.notEqual(still[0]![1], before);
    const during = events.filter((x) => x.at > truth.inputAt && x.at <= truth.settledAt + 60);
    assert.ok(during.filter((x) => x.e.type === "TYPE_WINDOW_CONTENT_CHANGED").length >= 2, `content changes while it moves: ${during.map((x) => x.e.type).join(",")}`);
    assert.deepEqual(events.filter((x) => x.at > truth.settledAt + 60).map((x) => x.e.type), [], "no event after it settled");
    assert.equal(ticking(d), false, "ticks stop when nothing moves");
    assert.equal(byId(d, "toolbar_title").text, "New note");
    assert.equal(byId(d, "title_input").bounds.left, 16, "the page is in its place");
  } finally {
    d.close();
  }
});

test("emulator-grpc: mid-transition the tree shows the page on its way in; a tap lands where the page ends up", async () => {
  const d = await todoAt("emulator-grpc");
  try {
    await tapNode(d, byText(d, "NEW NOTE"));
    // Read at once: a busy machine may delay a timer past the whole 300 ms slide.
    const mid = byId(d, "title_input").bounds.left;
    assert.ok(mid > 16, `the title field is still to the right: ${mid}`);
    await sleep(400);
    assert.equal(byId(d, "title_input").bounds.left, 16);
    const upAt = centre(byDesc(d, "Navigate up"));
    await tapNode(d, byDesc(d, "Navigate up"));
    await sleep(400);
    // A stale observation: the Up button read mid-transition is not where touches go.
    await tapNode(d, byText(d, "NEW NOTE"));
    await sleep(40);
    const movingUp = byDesc(d, "Navigate up");
    assert.ok(movingUp.bounds.left > 56, `Up is on its way in: ${movingUp.bounds.left}`);
    await tapNode(d, movingUp);
    assert.equal(byId(d, "toolbar_title").text, "New note", "the tap at the stale bounds missed");
    await sh(d, `input tap ${upAt[0]} ${upAt[1]}`);
    assert.equal(byId(d, "toolbar_title").text, "Todo", "a tap where Up ends up reaches it mid-transition");
  } finally {
    d.close();
  }
});

test("emulator-grpc: the keyboard slides up in ~250 ms", async () => {
  const d = await todoAt("emulator-grpc");
  try {
    const events = listen(d);
    await tapNode(d, byId(d, "search"));
    const tops: number[] = [];
    for (let i = 0; i < 14; i++) {
      tops.push(byId(d, "keyboard").bounds.top);
      await sleep(25);
    }
    const truth = lastSettle(d);
    assert.ok(truth.settledAt - truth.inputAt >= 245 && truth.settledAt - truth.inputAt <= 1000, `${truth.settledAt - truth.inputAt}`);
    const final = tops.at(-1)!;
    assert.ok(tops[0]! > final, `it comes from below: ${tops.join(",")}`);
    for (let i = 1; i < tops.length; i++) assert.ok(tops[i]! <= tops[i - 1]!, `it only rises: ${tops.join(",")}`);
    assert.ok(new Set(tops).size >= 2, `intermediate positions: ${tops.join(",")}`);
    assert.equal(final, 640 - 5 * 44);
    assert.ok(events.some((x) => x.e.type === "TYPE_WINDOW_CONTENT_CHANGED" && x.at > truth.inputAt + 20));
  } finally {
    d.close();
  }
});

test("emulator-grpc: a swipe over the list flings: it keeps scrolling in decaying steps after the finger lifts, with scroll events, then stops", async () => {
  const d = await todoAt("emulator-grpc", '{"list_load_ms": 0}');
  try {
    const events = listen(d);
    const firstTitle = (): string => top(d).find((n) => n.resourceId.endsWith(":id/note_title"))!.text;
    assert.equal(firstTitle(), "Buy bread");
    const list = byId(d, "notes");
    const [x] = centre(list);
    await sh(d, `input swipe ${x} ${list.bounds.top + 150} ${x} ${list.bounds.top + 90} 50`);
    const afterSwipe = firstTitle();
    const truth = lastSettle(d);
    // The swipe's 50 ms, then a fling of 500 ms after the finger lifts.
    assert.ok(truth.settledAt - truth.inputAt >= 545 && truth.settledAt - truth.inputAt <= 1500, `a fling of 500 ms: ${truth.settledAt - truth.inputAt}`);
    const seen: string[] = [afterSwipe];
    while (Date.now() < truth.settledAt + 100) {
      seen.push(firstTitle());
      await sleep(20);
    }
    assert.notEqual(seen.at(-1), afterSwipe, `the list kept moving after the finger lifted: ${[...new Set(seen)].join(" > ")}`);
    const scrolls = events.filter((x) => x.e.type === "TYPE_VIEW_SCROLLED" && x.at > truth.inputAt + 20);
    assert.ok(scrolls.length >= 1, "scroll events while it flings");
    const t = Date.now();
    await sleep(200);
    assert.deepEqual(events.filter((x) => x.at >= t).map((x) => x.e.type), [], "nothing after it stopped");
    assert.equal(ticking(d), false);
  } finally {
    d.close();
  }
});

test("emulator-grpc: Todo's note list loads with a spinner (a ProgressBar whose drawing turns), uiautomator dump waits for it; Up from the editor loads it again", async () => {
  const d = await todoAt("emulator-grpc", "{}");
  try {
    assert.ok(top(d).some((n) => n.className === "android.widget.ProgressBar"), "a spinner while the list loads");
    assert.ok(!top(d).some((n) => n.resourceId.endsWith(":id/note_title")), "no rows yet");
    const a = frameHash(d);
    await sleep(120);
    assert.notEqual(frameHash(d), a, "the spinner's drawing changes from frame to frame");
    const dump = await sh(d, "uiautomator dump /dev/tty");
    assert.equal(dump.err, "");
    assert.match(dump.out, /Buy bread/, "the dump waited for the rows");
    assert.doesNotMatch(dump.out, /ProgressBar/);
    await tapNode(d, byText(d, "Buy bread"));
    await sleep(400);
    await tapNode(d, byDesc(d, "Navigate up"));
    const truth = lastSettle(d);
    assert.ok(truth.settledAt - truth.inputAt >= 1195 && truth.settledAt - truth.inputAt <= 2500, `the list's load: ${truth.settledAt - truth.inputAt}`);
    await sleep(400);
    assert.ok(top(d).some((n) => n.className === "android.widget.ProgressBar"), "the spinner again");
    await sleep(Math.max(0, truth.settledAt + 120 - Date.now()));
    assert.ok(top(d).some((n) => n.text === "Buy bread"));
    assert.equal(ticking(d), false);
  } finally {
    d.close();
  }
});

test("a spinner that never stops (game config list_load_ms -1): uiautomator dump prints the device's idle error", async () => {
  const d = await todoAt("instant", '{"list_load_ms": -1}');
  try {
    assert.ok(top(d).some((n) => n.className === "android.widget.ProgressBar"));
    const r = await sh(d, "uiautomator dump /dev/tty");
    assert.equal(r.code, 0);
    assert.equal(r.err, "ERROR: could not get idle state.\n");
    d.faults.setLatencyProfile("emulator-grpc");
    const t0 = Date.now();
    const slow = await sh(d, "uiautomator dump /dev/tty");
    assert.equal(slow.err, "ERROR: could not get idle state.\n");
    assert.ok(Date.now() - t0 >= 2000, "after the global timeout");
    await tapNode(d, byText(d, "NEW NOTE"));
    assert.equal(byId(d, "toolbar_title").text, "New note");
    assert.ok(Number.isFinite(lastSettle(d).settledAt), "the editor has no slow list: it settles");
    await sleep(Math.max(0, lastSettle(d).settledAt + 20 - Date.now())); // the Up button at its final place
    await tapNode(d, byDesc(d, "Navigate up"));
    assert.equal(lastSettle(d).settledAt, Infinity, "back on the list, what the input started never settles");
    assert.equal(d.settledAt(Date.now()), Infinity);
  } finally {
    d.close();
  }
});

test("the animation scales: transition 0 leaves the keyboard (window) animation; window 0 too makes it instant; animator 0 stops the spinner's drawing", async () => {
  const t0 = await todoAt("emulator-grpc", '{"list_load_ms": 0}', ["transition_animation_scale 0"]);
  try {
    await tapNode(t0, byText(t0, "NEW NOTE"));
    const r = lastSettle(t0);
    assert.ok(r.settledAt - r.inputAt >= 250 && r.settledAt - r.inputAt < 300, `only the keyboard (250 ms) moves: ${r.settledAt - r.inputAt}`);
    assert.equal(byId(t0, "title_input").bounds.left, 16, "the page is in place at once");
  } finally {
    t0.close();
  }
  const off = await todoAt("emulator-grpc", '{"list_load_ms": 0}', ["transition_animation_scale 0", "window_animation_scale 0", "animator_duration_scale 0"]);
  try {
    const h = frameHash(off);
    await tapNode(off, byText(off, "NEW NOTE"));
    const r = lastSettle(off);
    assert.equal(r.settledAt, r.inputAt, "complete at once");
    assert.equal(ticking(off), false);
    const after = frameHash(off);
    assert.notEqual(after, h);
    await sleep(100);
    assert.equal(frameHash(off), after);
  } finally {
    off.close();
  }
  const slow = await todoAt("emulator-grpc", '{"list_load_ms": 600}', ["window_animation_scale 2", "animator_duration_scale 0"]);
  try {
    const a = frameHash(slow);
    await sleep(120);
    assert.equal(frameHash(slow), a, "a spinner without animators does not turn");
    assert.ok(top(slow).some((n) => n.className === "android.widget.ProgressBar"), "but shows until the list loads");
    await sleep(600);
    await tapNode(slow, byId(slow, "search"));
    const r = lastSettle(slow);
    assert.ok(r.settledAt - r.inputAt >= 500 && r.settledAt - r.inputAt < 650, `window_animation_scale 2 doubles the keyboard's 250 ms: ${r.settledAt - r.inputAt}`);
  } finally {
    slow.close();
  }
});

test("instant: a tap's effect is complete at once, nothing ticks, the tree is final", async () => {
  const d = await todoAt("instant", "{}");
  try {
    const events = listen(d);
    await tapNode(d, byText(d, "NEW NOTE"));
    const r = lastSettle(d);
    assert.equal(r.settledAt, r.inputAt);
    assert.equal(d.settledAt(Date.now()), r.settledAt);
    assert.equal(ticking(d), false);
    assert.equal(byId(d, "title_input").bounds.left, 16);
    const n = events.length;
    await sleep(100);
    assert.equal(events.length, n, "no events after the tap's own");
  } finally {
    d.close();
  }
});

test("through the real adb server at emulator-grpc: screencap right after a tap shows the screen on its way in, uiautomator dump waits for its end", async () => {
  const rig = await startRig(1);
  try {
    const dev = rig.fleet.devices[0]!;
    const cli = (args: string[]) => adbCli(rig.adb.port, dev.serial, args);
    assert.equal((await cli(["install", fileURLToPath(new URL("todo.apk", APK_DIR))])).code, 0);
    dev.android.faults.setLatencyProfile("emulator-grpc");
    assert.equal((await cli(["shell", rlStartLine(TODO, '{"list_load_ms": 0}', { forceStop: true })])).code, 0);
    const [x, y] = centre(byText(dev.android, "NEW NOTE"));
    const shot = async (): Promise<string> => createHash("sha1").update((await cli(["exec-out", "screencap"])).stdout).digest("hex");
    assert.equal((await cli(["shell", "input", "tap", String(x), String(y)])).code, 0);
    const early = await shot();
    const dump = await cli(["exec-out", "uiautomator", "dump", "/dev/tty"]);
    const xml = dump.stdout.toString("utf8");
    assert.match(xml, /text="New note"/);
    assert.match(xml, /resource-id="com\.farm\.simapps\.todo:id\/title_input"[^>]*bounds="\[16,/, "the dump shows the page in its place");
    const truth = lastSettle(dev.android);
    assert.ok(truth.settledAt - truth.inputAt >= 295, `${truth.settledAt - truth.inputAt}`);
    assert.ok(Date.now() >= truth.settledAt, "the dump returned after the screen settled");
    const late = await shot();
    assert.notEqual(early, late, "the early frame was mid-transition");
    assert.equal(await shot(), late, "then the frames stay equal");
  } finally {
    await rig.close();
  }
});
