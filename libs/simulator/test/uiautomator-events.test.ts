/**
 * `uiautomator events` (AOSP's EventsCommand, issue 36): one line per AccessibilityEvent until the process is
 * stopped, `MM-dd HH:mm:ss.SSS EventType: TYPE_…; EventTime: …; PackageName: …; …`, as a settle policy reads them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { sleep } from "@farm/time";
import { newDevice, sh } from "./android-helpers.ts";

const LINE = /^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} EventType: (TYPE_[A-Z_]+); EventTime: \d+; PackageName: [\w.]*; MovementGranularity: 0; Action: 0; ContentChangeTypes: \[[A-Z_]*\]; WindowChangeTypes: \[\] \[ ClassName: [^;]*; Text: \[.*\]; .*\]; recordCount: 0$/;

test("uiautomator events prints each event as Android does, until stopped; the help names it", async () => {
  const d = newDevice();
  try {
    const ac = new AbortController();
    const run = sh(d, "uiautomator events", { signal: ac.signal });
    await sleep(50);
    await sh(d, "am start -a android.settings.SETTINGS");
    await sh(d, "input keyevent KEYCODE_HOME");
    await sleep(50);
    ac.abort();
    const r = await run;
    const lines = r.out.split("\n").filter((l) => l !== "");
    assert.ok(lines.length >= 2, `events printed: ${r.out}`);
    for (const l of lines) assert.match(l, LINE);
    assert.ok(lines.some((l) => l.includes("EventType: TYPE_WINDOW_STATE_CHANGED")), r.out);
    const help = await sh(d, "uiautomator help");
    assert.match(help.out, /events: prints out accessibility events until terminated/);
  } finally {
    d.close();
  }
});
