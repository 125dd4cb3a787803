/** Shared test helpers: corpus and repository paths, and parsing inline task text. */
import { fileURLToPath } from "node:url";
import { parseTaskText, TaskLoadError, type LoadedTask } from "../src/index.ts";

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
export const corpus = fileURLToPath(new URL("../../../../shared/corpus/", import.meta.url));
export const tasksDir = fileURLToPath(new URL("../../../tasks/", import.meta.url));

export function parse(text: string, file = "/tmp/farm-task-tests/inline.textproto", apkDirs: string[] = []): LoadedTask {
  return parseTaskText(text, { sourcePath: file, apkDirs });
}

/** The TaskLoadError parsing `text` throws (fails the test if it loads). */
export function loadError(text: string): TaskLoadError {
  try {
    parse(text);
  } catch (e) {
    if (e instanceof TaskLoadError) return e;
    throw e;
  }
  throw new Error("expected the task to be rejected, but it loaded");
}
