/** Every command the simulated device knows, by name. */
import type { CommandSpec, CommandTable } from "./types.ts";
import { builtinCommands } from "./builtins.ts";
import { propCommands } from "./getprop.ts";

const ALL: CommandTable = {
  ...builtinCommands,
  ...propCommands,
};

export function findCommand(name: string): CommandSpec | undefined {
  return Object.hasOwn(ALL, name) ? ALL[name] : undefined;
}
