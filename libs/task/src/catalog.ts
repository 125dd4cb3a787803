/**
 * The farm's one task catalog: tasks by id, loaded from task files and folders (or given), shared by the
 * scheduler (which only checks id + hash, and reloads on an unknown id so new files are picked up without a
 * restart) and the worker (which runs them, with the APK folders beside the task paths).
 *
 *   const tasks = TaskCatalog.fromFiles(["tasks"], { onInvalid: (e) => log.warn(formatTaskError(e)) });
 *   tasks.get("classic_2048")?.hash;
 */
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import type { TaskLoadError } from "./errors.ts";
import { loadTaskSet } from "./load.ts";
import type { LoadedTask, TaskFamily } from "./model.ts";

/** What a catalog needs of a task: its id and content hash (a LoadedTask, or a stand-in that names one). */
export interface CatalogTask {
  task: { id: string };
  hash: string;
  /** Set for a task family (FAMILIES.md): what its campaigns' fixed params are checked against. */
  family?: TaskFamily;
}

export interface TaskCatalogOptions {
  /** APK folders for install steps. @default [] */
  apkDirs?: readonly string[];
  /** Also use an `apks/` folder beside each task path (the worker's layout). @default false */
  apksBesideTasks?: boolean;
  /** Called for each file that fails to load (it is skipped; one bad file does not stop a service). */
  onInvalid?: (e: TaskLoadError) => void;
  /** Load the files again when an unknown id is asked for. @default false */
  reloadOnMiss?: boolean;
}

export class TaskCatalog<T extends CatalogTask = LoadedTask> {
  private tasks: Map<string, T>;

  private constructor(
    initial: Iterable<T>,
    /** APK folders the tasks were loaded with (install steps look there). */
    readonly apkDirs: readonly string[],
    private readonly where: string,
    private readonly reload: (() => Iterable<T>) | undefined,
  ) {
    this.tasks = TaskCatalog.index(initial);
  }

  private static index<T extends CatalogTask>(tasks: Iterable<T>): Map<string, T> {
    const m = new Map<string, T>();
    for (const t of tasks) m.set(t.task.id, t);
    return m;
  }

  /** A fixed set of tasks (tests, or a caller that loaded them itself). */
  static of<T extends CatalogTask>(tasks: Iterable<T>, apkDirs: readonly string[] = []): TaskCatalog<T> {
    return new TaskCatalog(tasks, apkDirs, "the given task set", undefined);
  }

  /** Task files and folders of them; a file that fails to load goes to `onInvalid` and is skipped. */
  static fromFiles(paths: readonly string[], opts: TaskCatalogOptions = {}): TaskCatalog<LoadedTask> {
    const apkDirs = [...(opts.apkDirs ?? [])];
    if (opts.apksBesideTasks) {
      for (const p of paths) {
        const dir = existsSync(p) && statSync(p).isDirectory() ? p : path.dirname(p);
        const apks = path.join(dir, "apks");
        if (existsSync(apks) && !apkDirs.includes(apks)) apkDirs.push(apks);
      }
    }
    const load = (): LoadedTask[] => {
      const { tasks, errors } = loadTaskSet(paths, { apkDirs });
      for (const e of errors) opts.onInvalid?.(e);
      return tasks;
    };
    return new TaskCatalog(load(), apkDirs, paths.join(", "), opts.reloadOnMiss ? load : undefined);
  }

  get(id: string): T | undefined {
    if (!this.tasks.has(id) && this.reload) this.tasks = TaskCatalog.index(this.reload());
    return this.tasks.get(id);
  }

  /** Every task by id (as loaded; no reload). */
  get byId(): ReadonlyMap<string, T> {
    return this.tasks;
  }

  ids(): string[] {
    return [...this.tasks.keys()].sort();
  }

  /** Where the tasks come from, for error messages. */
  describe(): string {
    return this.where;
  }
}
