import type { Command } from "commander";
import { shown } from "./options.ts";
import type { CommandModule } from "./types.ts";

/** `farm bench <scenario> [--key value ...]`: runs one named load-test scenario from loadtest/. */
export const benchCommand: CommandModule = {
  register(program: Command) {
    program
      .command("bench")
      .description("run a benchmark scenario from loadtest/ (prints figures, last line key=value)")
      .argument("<scenario>", "scenario name")
      .allowUnknownOption(true)
      .helpOption(false)
      .argument("[options...]", "scenario options, e.g. --devices 8")
      .action(async (name: string, rest: string[]) => {
        const { scenarios } = await import("@farm/loadtest");
        // A name from the command line never reaches Object.prototype ("constructor", "__proto__").
        const load = Object.hasOwn(scenarios, name) ? scenarios[name] : undefined;
        if (!load) throw new Error(`unknown scenario '${shown(name)}'; known: ${Object.keys(scenarios).join(", ") || "(none)"}`);
        const opts: Record<string, string | boolean> = Object.create(null);
        for (let i = 0; i < rest.length; i++) {
          const a = rest[i] ?? "";
          if (!a.startsWith("--")) throw new Error(`unexpected argument '${shown(a)}'; options look like --name value`);
          const next = rest[i + 1];
          if (next !== undefined && !next.startsWith("--")) {
            opts[a.slice(2)] = next;
            i++;
          } else opts[a.slice(2)] = true;
        }
        const scenario = await load();
        await scenario.run(opts);
      });
  },
};
