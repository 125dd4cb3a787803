/**
 * The worker's own tasks, by id (the farm's one TaskCatalog, from @farm/task). A job only names a task
 * (id + hash); everything that runs on a device comes from here. Invalid files are reported and skipped, so one
 * bad file does not stop the worker; APK folders are the configured ones plus `apks/` beside each task path.
 */
import type { Logger } from "@farm/log";
import { TaskCatalog } from "@farm/task";

export { TaskCatalog };

export function loadTaskCatalog(taskPaths: readonly string[], extraApkDirs: readonly string[], logger: Logger): TaskCatalog {
  const catalog = TaskCatalog.fromFiles(taskPaths, {
    apkDirs: extraApkDirs,
    apksBesideTasks: true,
    onInvalid: (e) => logger.error({ event: "task:invalid", err: e.message }, "task file skipped"),
  });
  for (const t of catalog.byId.values()) logger.info({ event: "task:loaded", taskId: t.task.id, hash: t.hash, file: t.sourcePath }, "task loaded");
  if (catalog.byId.size === 0) throw new Error(`no valid task in ${taskPaths.join(", ")}`);
  return catalog;
}
