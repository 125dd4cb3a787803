/**
 * The simulated Android behind a simulated emulator: `SimAndroid` runs shell command lines as a
 * device would, renders its screen, holds its files, and injects faults. Also the simulated APK
 * format (`buildSimApk`, `parseSimApk`) and the prebuilt APKs of the simulated apps.
 */
export { SimAndroid, type SimAndroidOptions, type SimFs } from "./sim-android.ts";
export type { ShellIO } from "./shell/io.ts";
export type { Faults } from "./system/faults.ts";
export type { FileStat, DirEntry } from "./system/file-system.ts";
export { LATENCY_PROFILES, latencyClassOf, type LatencyProfileName } from "./system/latency.ts";
export { buildSimApk, parseSimApk, SimApkError, SIM_APK_MAGIC, PREBUILT_APKS, prebuiltApkFiles, type SimApkSpec, type SimApkManifest } from "../apk/index.ts";
export { LAUNCHER_PACKAGE, LAUNCHER_ACTIVITY } from "./system/package-manager.ts";
export { RL_TAG } from "./system/app-process.ts";
