import type { Command } from "commander";

/** A subcommand module: adds its command(s) to the program. Heavy imports belong inside the action. */
export interface CommandModule {
  register(program: Command): void;
}
