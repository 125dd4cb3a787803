/**
 * The agent flags of `farm submit` and `farm run` as commander options, and their raw values: what registering the
 * commands needs. Parsing them (goals files, settle specs, job bounds) is agent-options.ts, which the actions load.
 */
import type { Command } from "commander";

export interface ObserveFlags {
  observe?: string;
  frameEvery?: string;
  a11yEvery?: string;
  maxInvalidActions?: string;
  observationBudgetMb?: string;
  onObservationBudget?: string;
  maxStaleness?: string;
  onStale?: string;
  settle?: string;
}

/** The flags of `addAgentOptions` (and `--frame-every`, which both commands had before). */
export interface AgentFlags extends ObserveFlags {
  goal?: string;
  goals?: string;
}

/** Adds the agent flags to `farm run` or `farm submit`. */
export function addAgentOptions(cmd: Command, which: "run" | "submit"): Command {
  const each = which === "run" ? "its episodes" : "every episode";
  return cmd
    .option("--observe <kinds>", "what each step records: pixels,a11y (each optional): pixels = frames every --frame-every steps (default 1), a11y = the screen as a tree + element list every --a11y-every steps (default 1); a policy that needs pixels or elements gets them regardless")
    .option("--a11y-every <n>", "record the screen as a tree every N steps (0 = none)")
    .option("--max-invalid-actions <n>", "end an episode (truncated, invalid_actions) after N invalid agent answers (0 = no limit)")
    .option("--observation-budget-mb <n>", "bytes (MiB, 1-16384) of trees, frames and answers one episode may record; past it none are recorded (counted) and the episode goes on")
    .option("--on-observation-budget <stop|end>", "past --observation-budget-mb: stop recording (default) or end the episode (truncated, observation_budget)")
    .option("--max-staleness <v>", "policy versions: an episode whose steps' versions span more than V, or lag the campaign's current version (raised with `farm campaign set-version`) by more than V, is stale (versions compare as whole numbers, else in the order raised)")
    .option("--on-stale <mark|end>", "a stale episode is marked with the reason (mark, default) or ended (end: truncated, stale_policy)")
    .option("--settle <spec>", "how each step waits for the screen to settle after its action, before its observation: none (default) | fixed:MS | androidworld[:wait=MS,cap=MS] | events[:quiet=MS,cap=MS] | frames[:quiet=MS,cap=MS]")
    .option("--goal <text>", `the goal of ${each} (default: the task's description)`)
    .option("--goals <file.jsonl>", `one goal a line, {"goal": "...", "game_config": {...}?, "params": {...}?}; episode i gets line i mod N (game_config: its RL_TASK_GAME_CONFIG; params: a task family's fixed parameters, the goal then optional)`);
}
