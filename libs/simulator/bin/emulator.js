#!/usr/bin/env node
// The `emulator` command (a simulated Android emulator): registers tsx so the TypeScript sources run
// directly, then hands over to the command's main (src/cli/emulator.ts).
import { register } from "tsx/esm/api";

register();
const { emulatorMain } = await import("../src/cli/emulator.ts");
await emulatorMain();
