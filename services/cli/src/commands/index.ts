import { benchCommand } from "./bench.ts";
import { taskCommand } from "./task.ts";
import { trajectoriesCommand } from "./trajectories.ts";
import type { CommandModule } from "./types.ts";

/** Every subcommand of `farm`, one module each. */
export const commandModules: CommandModule[] = [
  benchCommand,
  taskCommand,
  trajectoriesCommand,
];
