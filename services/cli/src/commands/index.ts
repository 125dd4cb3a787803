import { benchCommand } from "./bench.ts";
import { campaignCommands } from "./campaign.ts";
import { demoCommand } from "./demo.ts";
import { devicesCommand } from "./devices.ts";
import { reportCommand } from "./report.ts";
import { runCommand } from "./run.ts";
import { schedulerCommand } from "./scheduler.ts";
import { simCommand } from "./sim.ts";
import { taskCommand } from "./task.ts";
import { trajectoriesCommand } from "./trajectories.ts";
import type { CommandModule } from "./types.ts";
import { workerCommand } from "./worker.ts";

/** Every subcommand of `farm`, one module each. */
export const commandModules: CommandModule[] = [
  benchCommand,
  campaignCommands,
  demoCommand,
  devicesCommand,
  reportCommand,
  runCommand,
  schedulerCommand,
  simCommand,
  taskCommand,
  trajectoriesCommand,
  workerCommand,
];
