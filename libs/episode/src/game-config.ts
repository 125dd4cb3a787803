/**
 * A per-episode game config (issue 28): the episode's `RL_TASK_GAME_CONFIG` JSON in place of the one the task's
 * reset `start_activity` steps pass. The task's `extra_args` are device-shell words (AndroidEnv joins them with
 * spaces and lets the device shell remove quotes), so they are split as the device would, the extra's value
 * replaced (or the extra added), and every word quoted again: the driver's quote removal gives back exactly
 * these words, and the JSON reaches the app as one argument whatever it holds.
 */
import { shQuote, shSplit } from "@farm/shell-words";
import { GAME_CONFIG_EXTRA, type SetupStep } from "@farm/task";

/** The extra args with every `--es RL_TASK_GAME_CONFIG <v>` set to `json`, or the extra added when there is none. */
export function withGameConfigExtra(extraArgs: readonly string[], json: string): string[] {
  const words = shSplit(extraArgs.join(" "));
  let found = false;
  for (let i = 0; i + 2 < words.length; i++) {
    if (words[i] === "--es" && words[i + 1] === GAME_CONFIG_EXTRA) {
      words[i + 2] = json;
      found = true;
      i += 2;
    }
  }
  if (!found) words.push("--es", GAME_CONFIG_EXTRA, json);
  return words.map(shQuote);
}

/** The reset steps with the game config applied to each `start_activity` request (other steps as they are). */
export function resetStepsWithGameConfig(steps: readonly SetupStep[], gameConfig: Readonly<Record<string, unknown>>): SetupStep[] {
  const json = JSON.stringify(gameConfig);
  return steps.map((s) => {
    const a = s.action;
    if (a?.kind !== "adb" || a.request.cmd.command !== "start_activity") return s;
    const cmd = { ...a.request.cmd, extraArgs: withGameConfigExtra(a.request.cmd.extraArgs, json) };
    return { ...s, action: { ...a, request: { ...a.request, cmd } } };
  });
}
