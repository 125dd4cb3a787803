/**
 * The `emulator` command's main (bin/emulator.js, sdk/emulator/emulator): binds runEmulator to this
 * process's arguments, environment, output, signals and exit status. The library code below it takes
 * all of these as parameters, so tests and `farm` can run it in-process.
 */
import { runUntilSignal, untilAborted } from "@farm/lifecycle";
import { runEmulator } from "../emulator/launcher/run-emulator.ts";

export async function emulatorMain(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const code = await runUntilSignal((stop) =>
    runEmulator(argv, env, {
      out: (line) => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
      // Console `crash` and the crash fault die as a crashing emulator would: no cleanup, no exit status.
      crash: () => process.kill(process.pid, "SIGKILL"),
      stopSignal: untilAborted(stop).then(() => String(stop.reason)),
    }),
  );
  // Exit only once stdout is flushed: a launcher reading the pipe must see every line.
  process.stdout.write("", () => process.exit(code));
}
