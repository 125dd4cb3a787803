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
export { startEmulatorGrpc, type EmulatorGrpcOptions, type EmulatorGrpcServer, type GrpcDevice } from "./grpc/emulator-grpc-server.ts";
export { SnapshotError, type SnapshotInfo } from "./snapshot/device-snapshots.ts";
export { startSimulatedDevices, type SimFleet, type SimFleetOptions } from "./fleet.ts";
export {
  type SimAndroidOptions, type ShellIO, SimApkError, type SimApkSpec, type SimApkManifest, type LatencyProfileName,
} from "./android/index.ts";
/** The simulated apps by id, for `new SimAndroid({ apps: appFactoryFor, … })` (SimDevice passes it itself). */
export type { AppCatalog } from "./android/app-contract.ts";
export { SimEmulator, consolePortsFrom, type SimEmulatorOptions } from "./emulator/sim-emulator.ts";
export type { ConsoleSnapshots, ConsoleSnapshotInfo, ConsoleBackend } from "./emulator/console/backend.ts";
export { parseDiscovery, type DiscoveryInfo } from "./emulator/discovery.ts";
export { avdHome, createAvd, AvdError, type Avd } from "./emulator/launcher/avd.ts";
export { type EmulatorIO } from "./emulator/launcher/run-emulator.ts";
