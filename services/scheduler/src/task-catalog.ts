/**
 * The tasks a scheduler accepts campaigns for: the same task folder the workers read (the farm's one
 * TaskCatalog, from @farm/task), so a campaign can only name a task (id + hash) that workers will recognise;
 * reloaded when an unknown id is asked for, so new files are picked up without a restart.
 */
import { TaskCatalog as Catalog, formatTaskError, type CatalogTask } from "@farm/task";
import type { Logger } from "@farm/log";

export type { CatalogTask };
/** The scheduler needs only each task's id and hash. */
export type TaskCatalog = Catalog<CatalogTask>;

/** A fixed set of tasks (tests, or a caller that loaded them itself). */
export function staticTaskCatalog(tasks: Iterable<CatalogTask>): TaskCatalog {
  return Catalog.of(tasks);
}

/** Task files (and folders of them) on disk; files that fail to load are logged and skipped. */
export function folderTaskCatalog(paths: readonly string[], log?: Logger): TaskCatalog {
  return Catalog.fromFiles(paths, { reloadOnMiss: true, onInvalid: (e) => log?.warn({ event: "task:load-failed", error: formatTaskError(e) }, "task file skipped") });
}
