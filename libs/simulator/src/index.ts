/**
 * @module @farm/simulator
 * Simulated Android emulators that speak the device side of the real ADB protocol and register
 * with a real adb server (`host:emulator:PORT`), so the adb CLI and adbkit drive them like emulators.
 * Each can also serve the emulator's gRPC endpoint (startEmulatorGrpc) and keeps snapshots of the
 * whole device (device.snapshots).
 *
 *   const adb = await startAdbServer();
 *   const fleet = await startSimulatedDevices({ adbPort: adb.port, count: 4 });
 *   fleet.devices[0].serial; // "emulator-NNNN"
 *   fleet.devices[0].faults.hang(true);
 *   const grpc = await startEmulatorGrpc(fleet.devices[0], { port: 0, token: undefined }); // grpc.port
 *   await fleet.devices[0].snapshots.save("clean"); await fleet.devices[0].snapshots.load("clean");
 *   await fleet.close(); await adb.close();
 */
export { SimDevice, defaultSnapshotDir, type SimDeviceOptions, type SimDeviceFaults, type LatencyProfile } from "./device.ts";
export { startEmulatorGrpc, SIM_EMULATOR_VERSION, type EmulatorGrpcOptions, type EmulatorGrpcServer, type GrpcDevice } from "./grpc/emulator-grpc-server.ts";
export { DeviceSnapshots, SnapshotError, validateSnapshotName, type SnapshotInfo } from "./snapshot/device-snapshots.ts";
export { startSimulatedDevices, type SimFleet, type SimFleetOptions } from "./fleet.ts";
export { DEVICE_FEATURES } from "./transport/banner.ts";
export {
  SimAndroid, type SimAndroidOptions, type ShellIO, buildSimApk, parseSimApk, SimApkError, SIM_APK_MAGIC,
  PREBUILT_APKS, prebuiltApkFiles, type SimApkSpec, type SimApkManifest, LAUNCHER_PACKAGE, LAUNCHER_ACTIVITY, RL_TAG,
  LATENCY_PROFILES, type LatencyProfileName,
} from "./android/index.ts";
/** The simulated apps by id, for `new SimAndroid({ apps: appFactoryFor, … })` (SimDevice passes it itself). */
export { appFactoryFor } from "./apps/registry.ts";
export type { AppCatalog } from "./android/app-contract.ts";
export { SimEmulator, consolePortsFrom, type SimEmulatorOptions } from "./emulator/sim-emulator.ts";
export type { ConsoleSnapshots, ConsoleSnapshotInfo, ConsoleBackend } from "./emulator/console/backend.ts";
export { discoveryDirectory, parseDiscovery, DiscoveryFile, type DiscoveryInfo } from "./emulator/discovery.ts";
export { defaultAuthTokenPath, loadOrCreateToken } from "./emulator/console/auth-token.ts";
export { avdHome, createAvd, readAvd, listAvds, AvdError, type Avd } from "./emulator/launcher/avd.ts";
export { runEmulator, type EmulatorIO } from "./emulator/launcher/run-emulator.ts";
