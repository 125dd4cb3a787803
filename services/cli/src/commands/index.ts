import { benchCommand } from "./bench.ts";
import { runCommand } from "./run.ts";
import { taskCommand } from "./task.ts";
import { trajectoriesCommand } from "./trajectories.ts";
import type { CommandModule } from "./types.ts";
import { workerCommand } from "./worker.ts";

/** Every subcommand of `farm`, one module each. */
export const commandModules: CommandModule[] = [
  benchCommand,
  runCommand,
  taskCommand,
  trajectoriesCommand,
  workerCommand,
];
