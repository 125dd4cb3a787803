import { Command } from "commander";
import { commandModules } from "./commands/index.ts";

/** The one composition root of the `farm` command: each subcommand registers itself from its own file. */
async function main(): Promise<void> {
  const program = new Command("farm")
    .description("Android episode farm: run AndroidEnv-style tasks on many emulators")
    .showHelpAfterError();
  for (const mod of commandModules) mod.register(program);
  await program.parseAsync(process.argv);
}

main().catch(async (err: unknown) => {
  const msg = err instanceof Error ? err.message : String(err);
  // Errors may quote a Redis URL, an API token or a policy URL: never print credentials.
  const { redactCredentials } = await import("@farm/queue");
  process.stderr.write(`farm: ${redactCredentials(msg)}\n`);
  process.exitCode = 1;
});
