import { readFileSync } from "node:fs";
import { Command } from "commander";
import { redactCredentials } from "@farm/queue/credentials";
import { terminalSafe } from "@farm/terminal-text";
import { commandModules } from "./commands/index.ts";
import { cliConfig } from "./config.ts";

const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };

/** The one composition root of the `farm` command: each subcommand registers itself from its own file. */
async function main(): Promise<void> {
  const program = new Command("farm")
    .description("Android episode farm: run AndroidEnv-style tasks on many emulators")
    .version(version, "-V, --version", "print the farm's version")
    .showHelpAfterError()
    // Commander echoes unknown options and bad arguments: never send their control bytes raw to a terminal.
    // Commander puts its "(Did you mean …?)" hint on a line of its own; everything else stays on one line.
    .configureOutput({ outputError: (text, write) => write(terminalSafe(text.replace(/\n$/, "").replace(/\n(?=\(Did you mean )/, " ")) + "\n") });
  for (const mod of commandModules) mod.register(program);
  await program.parseAsync(process.argv);
}

/** FARM_DEBUG; a broken environment must not hide the error being reported. */
function debugWanted(): boolean {
  try {
    return cliConfig().debug;
  } catch {
    return false;
  }
}

/** One line on stderr and exit status 1; the stack only with FARM_DEBUG=1 (a bad input is not a crash). */
function reportFatal(err: unknown, what = ""): void {
  const msg = err instanceof Error ? err.message : String(err);
  // Errors may quote a Redis URL, an API token or a policy URL: never print credentials.
  process.stderr.write(`farm: ${what}${terminalSafe(redactCredentials(msg))}\n`);
  if (debugWanted() && err instanceof Error && err.stack) process.stderr.write(`${redactCredentials(err.stack)}\n`);
  process.exitCode = 1;
}

process.on("uncaughtException", (err) => {
  reportFatal(err, "internal error: ");
  process.exit(1);
});
process.on("unhandledRejection", (err) => {
  reportFatal(err, "internal error: ");
  process.exit(1);
});

main().catch((err: unknown) => reportFatal(err));
