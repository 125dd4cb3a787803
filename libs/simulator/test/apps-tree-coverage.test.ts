/**
 * Every screen of every simulated app reports what it draws: each app is driven through its screens by its UI
 * (taps, typing), and every text drawn on the frame must be in the screen's tree, as `uiautomator dump` writes it
 * and as the accessibility forwarder's forest holds it: a node at the place the text is drawn whose text (or
 * content description) contains it. A one-character glyph (`<` Up, `X` clear, `>` a row's chevron) counts when the
 * node under it is clickable and labelled; the dots of a password field count for a password node.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Canvas } from "../src/graphics/canvas.ts";
import { forestOf } from "../src/android/forwarder/forest.ts";
import { newDevice, installPrebuilt, sh } from "./android-helpers.ts";
import { byDesc, byText, tapNode, typeOnKeyboard } from "./android-apps-ui-helpers.ts";
import type { SimAndroid } from "../src/android/index.ts";

interface Drawn {
  text: string;
  x: number;
  y: number;
}

interface TreeNode {
  text: string;
  desc: string;
  hint: string;
  password: boolean;
  clickable: boolean;
  bounds: [number, number, number, number];
}

/** The texts the current frame draws, each with a point inside its first glyph. */
function drawnTexts(d: SimAndroid): Drawn[] {
  const out: Drawn[] = [];
  const original = Object.getOwnPropertyDescriptor(Canvas.prototype, "text")!.value as Canvas["text"];
  Canvas.prototype.text = function (this: Canvas, x: number, y: number, text: string, scale: number, color: number) {
    out.push({ text, x: Math.round(x) + scale, y: Math.round(y) + scale });
    return original.call(this, x, y, text, scale, color);
  };
  try {
    d.system.render();
  } finally {
    Canvas.prototype.text = original;
  }
  return out;
}

const unescape = (s: string): string => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&#10;/g, "\n").replace(/&amp;/g, "&");

/** The nodes of `uiautomator dump` (every window, as Android 13's --windows writes them). */
async function dumpNodes(d: SimAndroid): Promise<TreeNode[]> {
  const r = await sh(d, "uiautomator dump --windows /dev/tty");
  assert.equal(r.code, 0, r.err);
  return [...r.out.matchAll(/<node ([^>]*?)\/?>/g)].map((m) => {
    const attr = (name: string): string => unescape(new RegExp(`(?:^| )${name}=(?:"([^"]*)"|'([^']*)')`).exec(m[1]!)?.slice(1).find((x) => x !== undefined) ?? "");
    const b = /\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]/.exec(attr("bounds"))!;
    return { text: attr("text"), desc: attr("content-desc"), hint: "", password: attr("password") === "true", clickable: attr("clickable") === "true", bounds: [Number(b[1]), Number(b[2]), Number(b[3]), Number(b[4])] };
  });
}

/** The nodes of the forest the accessibility forwarder sends for the screen. */
function forestNodes(d: SimAndroid): TreeNode[] {
  return forestOf(d.system.accessibility.snapshot()).windows.flatMap((w) =>
    (w.tree?.nodes ?? []).map((n) => {
      const b = n.bounds_in_screen ?? {};
      return { text: n.text ?? "", desc: n.content_description ?? "", hint: n.hint_text ?? "", password: !!n.is_password, clickable: !!n.is_clickable, bounds: [b.left ?? 0, b.top ?? 0, b.right ?? 0, b.bottom ?? 0] as [number, number, number, number] };
    }),
  );
}

const norm = (s: string): string => s.replace(/&/g, "AND").toLowerCase();

function covered(t: Drawn, nodes: readonly TreeNode[], withHints: boolean): boolean {
  const s = norm(t.text.trim());
  if (s === "") return true;
  const under = nodes.filter((n) => t.x >= n.bounds[0] && t.x < n.bounds[2] && t.y >= n.bounds[1] && t.y < n.bounds[3]);
  return under.some((n) => {
    if ([n.text, n.desc, withHints ? n.hint : ""].some((x) => x !== "" && norm(x).includes(s))) return true;
    if (n.password && /^\.+$/.test(s)) return true;
    return [...s].length === 1 && n.clickable && (n.text !== "" || n.desc !== "");
  });
}

const seen = new Map<string, number>();

/** Fails on a drawn text the dump or the forest lacks; `screen` names where. `noDump`: a screen never idle (a game in play), which uiautomator refuses as on a device. */
async function checkScreen(d: SimAndroid, screen: string, opts: { noDump?: boolean } = {}): Promise<void> {
  const drawn = drawnTexts(d);
  const dump = opts.noDump ? [] : await dumpNodes(d);
  const forest = forestNodes(d);
  // Android 8+ reports an empty field's hint as its text; our dump writes no hint yet, so a drawn hint is checked in the forest only.
  const hints = new Set(forest.filter((n) => n.hint !== "" && n.text === "").map((n) => norm(n.hint)));
  const missingDump = drawn.filter((t) => !opts.noDump && !covered(t, dump, false) && !hints.has(norm(t.text.trim()))).map((t) => t.text);
  const missingForest = drawn.filter((t) => !covered(t, forest, true)).map((t) => t.text);
  assert.deepEqual(missingDump, [], `${screen}: drawn but not in uiautomator dump`);
  assert.deepEqual(missingForest, [], `${screen}: drawn but not in the forwarder's forest`);
  seen.set(screen, drawn.length);
}

async function start(d: SimAndroid, component: string): Promise<void> {
  const r = await sh(d, `am start -S -W -n '${component}'`);
  assert.equal(r.code, 0, r.out + r.err);
}

test("the launcher and the static system apps", async () => {
  const d = newDevice();
  for (const apk of ["classic_2048.apk", "catch_the_ball.apk", "sim_notes.apk", "todo.apk", "sim_settings.apk"]) await installPrebuilt(d, apk);
  await checkScreen(d, "launcher");
  await start(d, "com.android.deskclock/.DeskClock");
  await checkScreen(d, "Clock");
  d.close();
});

test("the games: 2048 and Catch the Ball", async () => {
  const d = newDevice();
  await installPrebuilt(d, "classic_2048.apk");
  await installPrebuilt(d, "catch_the_ball.apk");
  await start(d, "com.tpcstld.twozerogame/.MainActivity");
  await checkScreen(d, "2048");
  await sh(d, "input swipe 180 400 180 100");
  await checkScreen(d, "2048 after a move");
  await start(d, "com.example.catchtheball/.MainActivity");
  await checkScreen(d, "Catch the Ball in play", { noDump: true });
  // One life and a fast ball: the game is soon over, and the screen idle for uiautomator.
  await sh(d, `am start -S -W -n com.example.catchtheball/.MainActivity --es RL_TASK_GAME_CONFIG '{"lives":1,"speed":20,"tick_ms":10}'`);
  await sh(d, "input tap 5 630");
  for (let i = 0; i < 100 && !(d.system.activities.foregroundProcess()?.app.state?.() as { over?: boolean }).over; i++) await sh(d, "sleep 0.05");
  await checkScreen(d, "Catch the Ball, game over");
  d.close();
});

test("Sim Notes: the list and each note", async () => {
  const d = newDevice();
  await installPrebuilt(d, "sim_notes.apk");
  await start(d, "com.farm.simapps.notes/.MainActivity");
  await checkScreen(d, "Sim Notes list");
  for (const i of [0, 1, 2]) {
    const row = d.system.accessibility.snapshot().windows.at(-1)!.nodes.find((n) => n.resourceId.endsWith(`:id/note_${i}`));
    assert.ok(row?.clickable && row.text !== "", `note ${i} is a clickable node with its title`);
    await tapNode(d, row);
    await checkScreen(d, `Sim Notes note ${i}`);
    await tapNode(d, byText(d, "BACK"));
  }
  d.close();
});

test("Todo: list, search, scrolled list, new-note editor with the keyboard, an existing note, the delete dialog", async () => {
  const d = newDevice();
  await installPrebuilt(d, "todo.apk");
  await start(d, "com.farm.simapps.todo/.MainActivity");
  await checkScreen(d, "Todo list");
  await sh(d, "input swipe 180 500 180 200");
  await checkScreen(d, "Todo list scrolled");
  await tapNode(d, byText(d, "NEW NOTE"));
  await checkScreen(d, "Todo new note, empty, keyboard up");
  await typeOnKeyboard(d, "milk\n2 litres");
  await checkScreen(d, "Todo new note, typed");
  await tapNode(d, byText(d, "SAVE"));
  await tapNode(d, byText(d, "milk"));
  await checkScreen(d, "Todo edit note");
  await tapNode(d, byText(d, "DELETE"));
  await checkScreen(d, "Todo delete dialog");
  await sh(d, "input keyevent KEYCODE_BACK");
  await sh(d, "input keyevent KEYCODE_BACK");
  await tapNode(d, byDesc(d, "Done: milk"));
  await checkScreen(d, "Todo list with a done note");
  await tapNode(d, d.system.accessibility.snapshot().windows.at(-1)!.nodes.find((n) => n.hintText === "Search notes")!);
  await typeOnKeyboard(d, "zzz");
  await checkScreen(d, "Todo search without results");
  d.close();
});

const SETTINGS_PATHS = [[], ["Network & internet"], ["Network & internet", "Internet"], ["Connected devices"], ["Display"], ["Display", "Font size"], ["Security"], ["System"]];

for (const [name, apk, component] of [
  ["Sim Settings", "sim_settings.apk", "com.farm.simapps.settings/.MainActivity"],
  ["Settings", undefined, "com.android.settings/.Settings"],
] as const) {
  test(`${name}: every screen, the reset dialog, a typed password`, async () => {
    const d = newDevice();
    if (apk) await installPrebuilt(d, apk);
    for (const path of SETTINGS_PATHS) {
      await start(d, component);
      for (const p of path) await tapNode(d, byText(d, p));
      await checkScreen(d, `${name} ${path.join(" > ") || "main"}`);
      if (path.at(-1) === "Internet") {
        await tapNode(d, byText(d, "Wi-Fi"));
        await checkScreen(d, `${name} Internet, Wi-Fi flipped`);
      }
      if (path.at(-1) === "Security") {
        await tapNode(d, d.system.accessibility.snapshot().windows.at(-1)!.nodes.find((n) => n.password)!);
        await typeOnKeyboard(d, "1234");
        await checkScreen(d, `${name} Security, password typed`);
      }
    }
    await start(d, component);
    await sh(d, "input swipe 180 600 180 100");
    await checkScreen(d, `${name} main scrolled`);
    await tapNode(d, byText(d, "Reset options"));
    await checkScreen(d, `${name} reset dialog`);
    d.close();
  });
}

test("the walk saw text on every screen", () => {
  for (const [screen, n] of seen) if (screen !== "Clock") assert.ok(n > 0, `${screen} drew no text`);
  assert.ok(seen.size >= 30, `${seen.size} screens`);
});
