import { readFileSync } from "node:fs";
import { Command } from "commander";
import { commandModules } from "./commands/index.ts";

const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };

/** The one composition root of the `farm` command: each subcommand registers itself from its own file. */
async function main(): Promise<void> {
  const program = new Command("farm")
    .description("Android episode farm: run AndroidEnv-style tasks on many emulators")
    .version(version, "-V, --version", "print the farm's version")
    .showHelpAfterError();
  for (const mod of commandModules) mod.register(program);
  await program.parseAsync(process.argv);
}

main().catch((err: unknown) => {
  const msg = err instanceof Error ? err.message : String(err);
  process.stderr.write(`farm: ${msg}\n`);
  process.exitCode = 1;
});
