/**
 * Building device shell command lines safely (task-format.md §8.1).
 *
 * The device's `sh` re-parses every command line the driver sends. Values that come from a task or a
 * job are therefore single-quoted so each reaches the device as exactly one argument and no shell
 * syntax inside it can act. `extra_args` are special: AndroidEnv joins them with spaces and lets the
 * device shell remove quotes (`'"RL_TASK_ENABLED"'` arrives as `RL_TASK_ENABLED`), so the driver
 * performs that quote removal itself — without expansions or operators — and quotes each word.
 */
import { shJoin, shSplit } from "@farm/shell-words";

/**
 * The device-shell form of AndroidEnv `extra_args`: joined with single spaces as upstream does, quote
 * removal as the device shell would do it, then every resulting word single-quoted. Returns the
 * words too (what the app receives).
 */
export function quoteExtraArgs(extraArgs: readonly string[]): { commandLine: string; words: string[] } {
  const words = shSplit(extraArgs.join(" "));
  return { commandLine: shJoin(words), words };
}
