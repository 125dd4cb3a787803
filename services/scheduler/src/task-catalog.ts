/**
 * The tasks a scheduler accepts campaigns for: the same task folder the workers read, so a campaign can
 * only name a task (id + hash) that workers will recognise. Loaded with @farm/task; reloaded when an
 * unknown id is asked for, so new files are picked up without a restart.
 */
import { formatTaskError, loadTaskSet } from "@farm/task";
import type { Logger } from "@farm/log";

export interface CatalogTask {
  id: string;
  hash: string;
}

export interface TaskCatalog {
  get(id: string): CatalogTask | undefined;
  ids(): string[];
  /** Where the tasks come from, for error messages. */
  describe(): string;
}

/** A fixed set of tasks (tests, or a caller that loaded them itself). */
export function staticTaskCatalog(tasks: Iterable<{ task: { id: string }; hash: string }>): TaskCatalog {
  const byId = new Map<string, CatalogTask>();
  for (const t of tasks) byId.set(t.task.id, { id: t.task.id, hash: t.hash });
  return {
    get: (id) => byId.get(id),
    ids: () => [...byId.keys()].sort(),
    describe: () => "the given task set",
  };
}

/** Task files (and folders of them) on disk; files that fail to load are logged and skipped. */
export function folderTaskCatalog(paths: readonly string[], log?: Logger): TaskCatalog {
  let byId = new Map<string, CatalogTask>();
  const load = (): void => {
    const { tasks, errors } = loadTaskSet(paths);
    for (const e of errors) log?.warn({ event: "task:load-failed", error: formatTaskError(e) }, "task file skipped");
    byId = new Map(tasks.map((t) => [t.task.id, { id: t.task.id, hash: t.hash }]));
  };
  load();
  return {
    get(id) {
      if (!byId.has(id)) load();
      return byId.get(id);
    },
    ids: () => [...byId.keys()].sort(),
    describe: () => paths.join(", "),
  };
}
