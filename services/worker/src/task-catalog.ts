/**
 * The worker's own tasks, by id. A job only names a task (id + hash); everything that runs on a device
 * comes from here. Invalid files are reported and skipped, so one bad file does not stop the worker.
 */
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import type { Logger } from "@farm/log";
import { loadTaskSet, type LoadedTask } from "@farm/task";

export interface TaskCatalog {
  byId: ReadonlyMap<string, LoadedTask>;
  /** APK folders for install steps: the configured ones plus `apks/` beside each task path. */
  apkDirs: string[];
}

export function loadTaskCatalog(taskPaths: readonly string[], extraApkDirs: readonly string[], logger: Logger): TaskCatalog {
  const apkDirs = [...extraApkDirs];
  for (const p of taskPaths) {
    const dir = existsSync(p) && statSync(p).isDirectory() ? p : path.dirname(p);
    const apks = path.join(dir, "apks");
    if (existsSync(apks) && !apkDirs.includes(apks)) apkDirs.push(apks);
  }
  const { tasks, errors } = loadTaskSet(taskPaths, { apkDirs });
  for (const e of errors) logger.error({ event: "task:invalid", err: e.message }, "task file skipped");
  const byId = new Map<string, LoadedTask>();
  for (const t of tasks) {
    byId.set(t.task.id, t);
    logger.info({ event: "task:loaded", taskId: t.task.id, hash: t.hash, file: t.sourcePath }, "task loaded");
  }
  if (byId.size === 0) throw new Error(`no valid task in ${taskPaths.join(", ")}`);
  return { byId, apkDirs };
}
