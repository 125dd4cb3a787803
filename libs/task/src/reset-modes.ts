/**
 * How a campaign starts its episodes (`--reset`), and which tasks can start from a snapshot taken after their
 * reset steps. The mode belongs with the task because whether it is sound depends on the task's reset steps:
 * a reset that draws from the episode's seed would be frozen at one draw by a start snapshot.
 */
import type { Task } from "./model.ts";

/** `steps`: the reset steps every episode; `setup-snapshot`: load a snapshot of the setup state, then the reset
 * steps; `start-snapshot`: load a snapshot taken after setup + reset steps, no reset steps. */
export const RESET_MODES = ["steps", "setup-snapshot", "start-snapshot"] as const;
export type ResetMode = (typeof RESET_MODES)[number];
export const DEFAULT_RESET_MODE: ResetMode = "steps";

export function isResetMode(v: unknown): v is ResetMode {
  return typeof v === "string" && (RESET_MODES as readonly string[]).includes(v);
}

/** Reset-step kinds whose outcome depends on the episode's seed (they pick from the episode's RNG). */
const SEEDED_KINDS = new Set(["start_random_activity", "force_stop_random_activity", "clear_cache_random_activity"]);

/**
 * Why `start-snapshot` cannot run this task, or undefined when it can. None of the simulated apps (nor AndroidEnv)
 * takes a seed after it has started (RL_TASK_GAME_CONFIG is read at app start, and is the same every episode in a
 * task file), so a seeded reset has nothing to apply the seed to after a load and is refused.
 */
export function startSnapshotRefusal(task: Pick<Task, "id"> & { resetSteps?: Task["resetSteps"] }): string | undefined {
  // A catalog that holds only ids and hashes cannot tell; the worker refuses the job then (TaskNotRunnableError).
  if (!task.resetSteps) return undefined;
  const i = task.resetSteps.findIndex((s) => s.action !== undefined && SEEDED_KINDS.has(s.action.kind));
  if (i < 0) return undefined;
  const step = task.resetSteps[i]!;
  return (
    `task '${task.id}' reset_steps[${i}] (line ${step.line}): ${step.action!.kind} draws from each episode's seed, and no app ` +
    `takes that seed after a snapshot load, so reset mode start-snapshot would replay one draw every episode; use --reset steps or setup-snapshot`
  );
}

/** The intent extra that carries a task app's configuration (JSON) in a start_activity's extra_args. */
export const GAME_CONFIG_EXTRA = "RL_TASK_GAME_CONFIG";

/**
 * Why per-episode game configs (issue 28) cannot run this task in this reset mode, or undefined when they can. The
 * config goes into the reset steps' start_activity extras (@farm/episode, game-config.ts), so the app must be started
 * by each episode's reset steps.
 */
export function gameConfigRefusal(task: Pick<Task, "id"> & { resetSteps?: Task["resetSteps"] }, mode: ResetMode): string | undefined {
  if (mode === "start-snapshot") {
    return `task '${task.id}': a per-episode game config is passed by the reset steps' start_activity, and reset mode start-snapshot loads a snapshot instead of running them; use --reset steps or setup-snapshot`;
  }
  // A catalog that holds only ids and hashes cannot tell; the worker refuses the job then.
  const starts = task.resetSteps?.some((s) => s.action?.kind === "adb" && s.action.request.cmd.command === "start_activity");
  if (starts === false) return `task '${task.id}': a per-episode game config goes into the reset steps' start_activity extras, and its reset_steps start no activity`;
  return undefined;
}
