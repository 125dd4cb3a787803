/** Every command the simulated device knows, by name. */
import type { CommandSpec, CommandTable } from "./types.ts";
import { builtinCommands } from "./builtins.ts";
import { propCommands } from "./getprop.ts";
import { logcatCommands } from "./logcat.ts";
import { settingsCommands } from "./settings.ts";
import { wmCommands } from "./wm.ts";
import { amCommands } from "./am.ts";
import { pmCommands } from "./pm.ts";
import { cmdCommands } from "./cmd.ts";
import { inputCommands } from "./input.ts";
import { dumpsysCommands } from "./dumpsys.ts";
import { screencapCommands } from "./screencap.ts";
import { fileCommands } from "./files.ts";
import { grepCommands } from "./grep.ts";
import { miscCommands } from "./misc.ts";
import { textToolCommands } from "./text-tools.ts";
import { svcCommands } from "./svc.ts";
import { uiautomatorCommands } from "./uiautomator.ts";
import { sqlite3Commands } from "./sqlite3.ts";

let all: CommandTable | undefined;

function table(): CommandTable {
  // Built on first use: cmd.ts looks commands up here, so the table must not be read while modules load.
  all ??= {
    ...builtinCommands,
    ...propCommands,
    ...logcatCommands,
    ...settingsCommands,
    ...wmCommands,
    ...amCommands,
    ...pmCommands,
    ...cmdCommands,
    ...inputCommands,
    ...dumpsysCommands,
    ...screencapCommands,
    ...fileCommands,
    ...grepCommands,
    ...miscCommands,
    ...textToolCommands,
    ...svcCommands,
    ...uiautomatorCommands,
    ...sqlite3Commands,
  };
  return all;
}

export function findCommand(name: string): CommandSpec | undefined {
  const t = table();
  return Object.hasOwn(t, name) ? t[name] : undefined;
}
