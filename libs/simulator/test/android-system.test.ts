import { test } from "node:test";
import assert from "node:assert/strict";
import { PNG } from "pngjs";
import { newDevice, sh, installPrebuilt, PIN_LINE } from "./android-helpers.ts";

const NOTES = "com.farm.simapps.notes/com.farm.simapps.notes.MainActivity";

/** The app-screen view-hierarchy matcher of task-format.md §7.4, written from the spec. */
function matchViewHierarchy(dump: string, path: string[]): boolean {
  interface N { text: string; children: N[] }
  const root: N = { text: "", children: [] };
  let stack: N[] = [root];
  for (const raw of dump.split("\n")) {
    const line = raw.replace(/[ \r]+$/, "");
    if (line.trim() === "") continue;
    const k = Math.floor((line.length - line.trimStart().length) / 2);
    const parent = stack[Math.min(k, stack.length - 1)]!;
    stack = stack.slice(0, stack.indexOf(parent) + 1);
    const node = { text: line.trimStart(), children: [] };
    parent.children.push(node);
    stack.push(node);
  }
  const find = (n: N, budget: number): N | undefined => {
    for (const c of n.children) if (c.text.startsWith("View Hierarchy")) return c;
    if (budget === 0) return undefined;
    for (const c of n.children) {
      const f = find(c, budget - 1);
      if (f) return f;
    }
    return undefined;
  };
  let cur = find(root, 3);
  if (!cur) return false;
  for (const re of path) {
    const next: N | undefined = cur.children.find((c) => new RegExp(`^(?:${re})`).test(c.text));
    if (!next) return false;
    cur = next;
  }
  return true;
}

test("pm list packages / features / path; wm size; settings", async () => {
  const d = newDevice();
  const pkgs = (await sh(d, "pm list packages 2>/dev/null")).out.split(/\s+/).filter((w) => w.startsWith("package:")).map((w) => w.slice(8));
  assert.ok(pkgs.includes("com.android.launcher3") && pkgs.includes("com.android.settings"));
  assert.ok((await sh(d, "pm list features")).out.split("\n").includes("feature:android.hardware.touchscreen"));
  await installPrebuilt(d, "sim_notes.apk");
  assert.deepEqual((await sh(d, "pm list packages -3")).out, "package:com.farm.simapps.notes\n");
  assert.equal((await sh(d, "pm path com.farm.simapps.notes")).out, "package:/data/app/com.farm.simapps.notes-1/base.apk\n");
  assert.equal((await sh(d, "pm path no.such.pkg")).code, 1);
  assert.equal((await sh(d, "wm size")).out, "Physical size: 360x640\n");
  assert.equal((await sh(d, "settings get global window_animation_scale")).out, "1.0\n");
  await sh(d, "settings put global window_animation_scale 0.0");
  assert.equal((await sh(d, "settings get global window_animation_scale")).out, "0.0\n");
  assert.equal((await sh(d, "settings get secure nope")).out, "null\n");
  assert.equal((await sh(d, "settings delete global window_animation_scale")).out, "Deleted 1 rows\n");
  assert.match((await sh(d, "settings list system")).out, /^user_rotation=0$/m);
  assert.equal((await sh(d, "settings get bogus x")).code, 255);
  assert.equal((await sh(d, "pm grant com.farm.simapps.notes android.permission.WRITE_SECURE_SETTINGS")).code, 0);
  assert.equal((await sh(d, "pm grant no.such.pkg android.permission.X")).code, 255);
  d.close();
});

test("rotation via user_rotation shows in dumpsys input (SurfaceOrientation) as §8.4 parses it", async () => {
  const d = newDevice();
  const orientation = async (): Promise<number | undefined> => {
    for (const line of (await sh(d, "dumpsys input")).out.split("\n")) {
      const m = /\s+(SurfaceOrientation|InputDeviceOrientation):\s+.*(\d)/.exec(line);
      if (m) return Number(m[2]);
    }
    return undefined;
  };
  assert.equal(await orientation(), 0);
  await sh(d, "settings put system user_rotation 1");
  assert.equal(await orientation(), 1);
  await sh(d, "settings put system user_rotation 3");
  assert.equal(await orientation(), 3);
  d.close();
});

test("am start -W shapes, short-form expansion, unknown activity error", async () => {
  const d = newDevice();
  await installPrebuilt(d, "sim_notes.apk");
  const r = await sh(d, "am start -W -n com.farm.simapps.notes/.MainActivity");
  assert.equal(r.code, 0);
  const lines = r.out.split("\n");
  assert.equal(lines[0], "Starting: Intent { cmp=com.farm.simapps.notes/.MainActivity }");
  for (const prefix of ["Status: ok", "Activity: com.farm.simapps.notes/.MainActivity", "TotalTime: ", "WaitTime: ", "Complete"]) {
    assert.ok(lines.some((l) => l.startsWith(prefix)), `missing ${prefix}`);
  }
  assert.ok(!r.out.includes("Error"));
  const again = await sh(d, "am start -W -n com.farm.simapps.notes/.MainActivity");
  assert.match(again.out, /brought to the front/);
  assert.ok(!again.out.includes("Error"));
  const bad = await sh(d, "am start -W -n com.farm.simapps.notes/.Missing");
  assert.equal(bad.code, 0, "Android's am exits 0 when the activity does not exist");
  assert.match(bad.out, /^Error type 3$/m);
  assert.match(bad.out, /^Error: Activity class \{com\.farm\.simapps\.notes\/com\.farm\.simapps\.notes\.Missing\} does not exist\.$/m);
  assert.match((await sh(d, "am start -n no.such.pkg/.Main 2>&1")).out, /Error/);
  // A trailing component (no -n), and a trailing package name, resolve like am does.
  await sh(d, "am force-stop com.farm.simapps.notes");
  assert.match((await sh(d, "am start -W com.farm.simapps.notes/.MainActivity")).out, /^Status: ok$/m);
  await sh(d, "am force-stop com.farm.simapps.notes");
  assert.match((await sh(d, "am start -a android.intent.action.MAIN com.farm.simapps.notes")).out, /cmp=com\.farm\.simapps\.notes\/\.MainActivity/);
  assert.match((await sh(d, "am broadcast -a com.farm.PING")).out, /^Broadcasting: Intent \{ act=com\.farm\.PING .*\}\nBroadcast completed: result=0\n$/);
  d.close();
});

test("current activity, pinning regex, dumpsys window, launcher when no app is in front", async () => {
  const d = newDevice();
  await installPrebuilt(d, "sim_notes.apk");
  const current = async (): Promise<string | undefined> => {
    const out = (await sh(d, "am stack list | grep -E visible=true")).out;
    return /.*\{(.*)\}/.exec(out.split("\n")[0]!)?.[1];
  };
  assert.equal(await current(), "com.android.launcher3/com.android.launcher3.Launcher");
  await sh(d, "am start -n com.farm.simapps.notes/.MainActivity");
  assert.equal(await current(), NOTES);
  const stack = (await sh(d, "am stack list")).out.split("\n");
  const pin = stack.map((l) => PIN_LINE.exec(l)?.groups).find((g) => g && (g.base_activity === NOTES || g.top_activity === NOTES));
  assert.ok(pin, "a pinnable task line");
  assert.match(pin.id!, /^\d+$/);
  assert.match((await sh(d, "dumpsys window")).out, /^  mCurrentFocus=Window\{[0-9a-f]+ u0 com\.farm\.simapps\.notes\/com\.farm\.simapps\.notes\.MainActivity\}$/m);
  assert.match((await sh(d, "dumpsys activity activities")).out, /mResumedActivity: ActivityRecord\{[0-9a-f]+ u0 com\.farm\.simapps\.notes\/\.MainActivity t\d+\}/);
  await sh(d, "am force-stop com.farm.simapps.notes");
  assert.equal(await current(), "com.android.launcher3/com.android.launcher3.Launcher");
  d.close();
});

test("dumpsys activity <pkg> <pkg>: the §7.4 matcher walks the View Hierarchy", async () => {
  const d = newDevice();
  await installPrebuilt(d, "sim_notes.apk");
  await sh(d, "am start -n com.farm.simapps.notes/.MainActivity");
  const dump = (await sh(d, "dumpsys activity com.farm.simapps.notes com.farm.simapps.notes")).out;
  const main = ["^DecorView@.*\\[MainActivity\\]$", "^android.widget.LinearLayout\\{.*\\}$", "^android.widget.FrameLayout\\{.*android:id/content\\}$", "^android.widget.LinearLayout\\{.*app:id/notes_root\\}$"];
  assert.ok(matchViewHierarchy(dump, main), dump);
  assert.ok(!matchViewHierarchy(dump, ["^DecorView@.*\\[NoteActivity\\]$"]));
  await sh(d, "input tap 180 120"); // opens note 0
  const noteDump = (await sh(d, "dumpsys activity com.farm.simapps.notes com.farm.simapps.notes")).out;
  assert.ok(matchViewHierarchy(noteDump, ["^DecorView@.*\\[NoteActivity\\]$"]), noteDump);
  assert.ok(matchViewHierarchy(noteDump, ["^DecorView", "^android.widget.LinearLayout", "^android.widget.FrameLayout", "^android.widget.LinearLayout\\{.*app:id/note_root\\}$"]));
  assert.match((await sh(d, "dumpsys activity com.tpcstld.twozerogame com.tpcstld.twozerogame")).out, /no activities match/);
  d.close();
});

test("screencap -p is a PNG of the current screen; raw screencap has the 12-byte header", async () => {
  const d = newDevice();
  await installPrebuilt(d, "sim_notes.apk");
  await sh(d, "am start -n com.farm.simapps.notes/.MainActivity");
  const r = await sh(d, "echo && screencap -p 2>/dev/null");
  assert.equal(r.bytes[0], 0x0a);
  const png = PNG.sync.read(Buffer.from(r.bytes.subarray(1)));
  assert.equal(png.width, 360);
  assert.equal(png.height, 640);
  const fb = d.framebuffer();
  assert.deepEqual(new Uint8Array(png.data), fb.rgba);
  // The exit button is red: sample its centre.
  const at = (x: number, y: number): number[] => [...png.data.subarray((y * 360 + x) * 4, (y * 360 + x) * 4 + 4)];
  assert.deepEqual(at(130, 550), [0xe5, 0x39, 0x35, 255]);
  const raw = await sh(d, "screencap");
  const view = Buffer.from(raw.bytes);
  assert.deepEqual([view.readUInt32LE(0), view.readUInt32LE(4), view.readUInt32LE(8)], [360, 640, 1]);
  assert.equal(raw.bytes.length, 12 + 360 * 640 * 4);
  await sh(d, "screencap -p /sdcard/shot.png");
  assert.equal(PNG.sync.read(Buffer.from(d.fs.read("/sdcard/shot.png")!)).width, 360);
  d.close();
});

test("monkey launch idiom, pidof, date", async () => {
  const d = newDevice(1, { now: () => 1_700_000_000_500 });
  await installPrebuilt(d, "sim_notes.apk");
  assert.match((await sh(d, "monkey -p com.farm.simapps.notes -c android.intent.category.LAUNCHER 1")).out, /Events injected: 1/);
  assert.match((await sh(d, "am stack list | grep -E visible=true")).out, /notes\.MainActivity\}/);
  assert.match((await sh(d, "pidof com.farm.simapps.notes")).out, /^\d+\n$/);
  assert.equal((await sh(d, "pidof com.example.none")).code, 1);
  assert.equal((await sh(d, "date +%s")).out, "1700000000\n");
  assert.equal((await sh(d, "date")).out, "Tue Nov 14 22:13:20 UTC 2023\n");
  d.close();
});
