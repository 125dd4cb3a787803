/**
 * @module @farm/local-farm
 * A whole farm on one machine (Redis, adb server, devices, a worker host, the scheduler) started with one call
 * and stopped with one: what `farm demo`, the benchmarks and the end-to-end tests share.
 */
export { startLocalFarm, startLocalWorkerFarm, type LocalFarm, type LocalWorkerFarm, type LocalFarmOptions, type LocalDevices, type LocalDeviceSource } from "./local-farm.ts";
