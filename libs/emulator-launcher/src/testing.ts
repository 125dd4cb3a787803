/**
 * @module @farm/emulator-launcher/testing
 * What the supervisor's tests check directly (the relaunch back-off, the emulator command line); not part of the
 * public API (`@farm/emulator-launcher`: the supervisor), and imported by no production code.
 */
export { relaunchDelayMs } from "./supervisor.ts";
export { emulatorArgs } from "./command-line.ts";
export { grpcStatusProbe, adbStatusProbe } from "./emulator-status.ts";
