/** The task the FakeDevice-backed benchmarks run (bench scale, bench net, the partition checks). */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * Classic 2048 as a FakeDevice runs it: the same task without the rotation, cache wipe and screen pinning
 * steps (the in-memory device does not emulate `settings`, `pm clear` or pinning), with a copy of its APK beside it.
 */
export function fakeDeviceTask(dir: string): string {
  const src = path.join(REPO, "tasks/classic_2048.textproto");
  const text = readFileSync(src, "utf8")
    .replace(/\},\s*# Portrait orientation\s*\{ adb_call: \{ rotate: \{ orientation: PORTRAIT_0 \} \} \}/, "}")
    .replace(/^.*clear_cache.*$/m, "")
    .replace(/\},\s*# Pin the screen[\s\S]*?start_screen_pinning[\s\S]*?\n  \}\n/, "}\n");
  // The APK beside the task, as a task's paths must stay inside its folder.
  mkdirSync(path.join(dir, "apks"), { recursive: true });
  copyFileSync(path.join(REPO, "tasks/apks/classic_2048.apk"), path.join(dir, "apks/classic_2048.apk"));
  if (/rotate|clear_cache|screen_pinning/.test(text)) throw new Error(`bench scale: could not drop the rotation step from ${src}`);
  const file = path.join(dir, "classic_2048_fake.textproto");
  writeFileSync(file, text);
  return file;
}

