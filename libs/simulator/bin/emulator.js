#!/usr/bin/env node
// The `emulator` command (a simulated Android emulator): registers tsx so the TypeScript sources run
// directly, then runs the launcher with this process's arguments, environment and signals.
import { register } from "tsx/esm/api";

register();
const { runEmulator } = await import("../src/emulator/launcher/run-emulator.ts");
const code = await runEmulator(process.argv.slice(2), process.env, {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write("", () => process.exit(code));
