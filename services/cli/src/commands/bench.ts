import type { Command } from "commander";
import { scenarios } from "@farm/loadtest";
import { shown } from "./options.ts";
import type { CommandModule } from "./types.ts";

/**
 * `farm bench <scenario> [options]`: runs one load-test scenario from loadtest/. Each scenario is a subcommand
 * with its declared options (loadtest/src/scenarios.ts), so the same option parser as every other command
 * checks them: a typo is rejected with the list of options, `farm bench --help` lists the scenarios and
 * `farm bench <scenario> --help` their options.
 */
export const benchCommand: CommandModule = {
  register(program: Command) {
    const bench = program
      .command("bench")
      .description("run a benchmark scenario from loadtest/ (prints figures, last line key=value)")
      .argument("[scenario]", "scenario name (see the commands below)")
      // Reached only by a name that is no scenario (commander routes the known ones to their subcommands).
      .action((name: string | undefined) => {
        if (name === undefined) return bench.help();
        throw new Error(`unknown scenario '${shown(name)}'; known: ${Object.keys(scenarios).join(", ")}`);
      });
    for (const [name, entry] of Object.entries(scenarios)) {
      const sub = bench.command(name).description(entry.describe);
      for (const o of entry.options) sub.option(o.flags, o.description);
      sub.action(async () => {
        // The scenario reads its options by flag name (`max-steps`), as declared.
        const opts: Record<string, string | boolean> = {};
        for (const o of sub.options) {
          const v: unknown = sub.getOptionValue(o.attributeName());
          if (v !== undefined && o.long) opts[o.long.slice(2)] = v as string | boolean;
        }
        const scenario = await entry.load();
        await scenario.run(opts);
      });
    }
  },
};
