/**
 * @module @farm/emulator-launcher
 * Emulators a worker launches itself: the real emulator command line (own ports, headless, read-only
 * AVD), boot and health over the emulator's gRPC (adb getprop without it), relaunch with backoff, clean
 * shutdown, and no orphan when the worker dies.
 *
 *   const sup = new EmulatorSupervisor({ count: 4, avd: "Pixel_Sim", executable: "/sdk/emulator/emulator", adbPort: 5037 }, { logger });
 *   sup.start();
 *   await sup.close();
 */
export { EmulatorSupervisor, type InstanceState, type LaunchConfig, type RelaunchCause, type RelaunchEvent, type SupervisorHooks } from "./supervisor.ts";
export type { EmulatorCommand } from "./command-line.ts";
export type { EmulatorPorts } from "./ports.ts";
export type { SpawnEmulatorOptions } from "./emulator-process.ts";
export type { ProbeResult, StatusProbe } from "./emulator-status.ts";
