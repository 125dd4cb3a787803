/**
 * An episode's task instance (issue 41, `libs/task/FAMILIES.md`): built per episode from the job's task, and
 * what its final score counts in the metrics once the episode is committed.
 */
import type { EpisodeTrajectory } from "@farm/episode";
import type { ScoreResult } from "@farm/metrics";
import { createFamilyInstance, type InstanceKey, type TaskInstance } from "@farm/scoring";
import { createRemoteTaskInstance, type RemoteTaskOptions } from "@farm/task-protocol";
import path from "node:path";
import type { LoadedTask, TaskParams } from "@farm/task";

/**
 * The task instance of one episode, or undefined when its task is not a family with parameters, set-up, a goal
 * template or checks. THE ONE SWITCH POINT between declarative families and outside task code.
 */
export function taskInstanceFor(loaded: LoadedTask, key: InstanceKey, remote: RemoteTaskOptions = {}): TaskInstance | undefined {
  const f = loaded.family;
  if (!f) return undefined;
  // APKs a task server installs by host path come from the task's own folder only.
  if (f.taskServer) return createRemoteTaskInstance(f.taskServer, key, { taskDir: path.dirname(f.taskPath), ...remote });
  if (!f.checks && f.params.length === 0 && f.setup.length === 0 && !f.goal) return undefined;
  return createFamilyInstance(f, key, { ...(loaded.task.description ? { description: loaded.task.description } : {}) });
}

/** The job's fixed parameters (`params`, added to the job schema with task families), when it has them. */
export function jobParams(data: object): TaskParams | undefined {
  const p = (data as { params?: unknown }).params;
  return p !== null && typeof p === "object" && !Array.isArray(p) ? (p as TaskParams) : undefined;
}

/** How a committed episode's final score counts (`farm_episode_scores_total`), or undefined when it had none. */
export function scoreOutcome(t: Pick<EpisodeTrajectory, "success" | "scoreError" | "counters">): { result: ScoreResult; seconds?: number } | undefined {
  if (t.success === undefined && t.scoreError === undefined) return undefined;
  const ms = t.counters.instance_score_ms;
  const result: ScoreResult = t.scoreError !== undefined ? "error" : t.success === 1 ? "success" : "failure";
  return { result, ...(ms !== undefined ? { seconds: ms / 1000 } : {}) };
}
