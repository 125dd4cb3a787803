/**
 * The simulated Android behind a simulated emulator: `SimAndroid` runs shell command lines as a
 * device would, renders its screen, holds its files, and injects faults. Also the simulated APK
 * format (`buildSimApk`, `parseSimApk`).
 */
export { SimAndroid, type SimAndroidOptions, type SimFs } from "./sim-android.ts";
export type { ShellIO } from "./shell/io.ts";
export type { Faults } from "./system/faults.ts";
export type { FileStat, DirEntry } from "./system/file-system.ts";
export { LATENCY_PROFILES, type LatencyProfileName } from "./system/latency.ts";
