/**
 * Simulated emulators in a child process (`farm sim`), as real emulators are never inside the
 * measuring process: its CPU and event loop stay separate from the code under test.
 */
import type { ChildProcess } from "node:child_process";
import type { LocalDeviceSource } from "@farm/local-farm";
import { startFarmChild } from "./farm-child.ts";

export interface SimChild {
  child: ChildProcess;
  serials: string[];
  /** serial → the device's emulator gRPC endpoint (`127.0.0.1:<grpc_port>`), for devices that serve one. */
  grpcEndpoints: Record<string, { address: string }>;
  close(): Promise<void>;
}

/** `farm sim --devices N --adb-port P [extra args, e.g. --screen WxH]` as a child; resolves with its serials once every device is online. */
export async function startSimChild(devices: number, adbPort: number, profile: string, extraArgs: string[] = []): Promise<SimChild> {
  const serials: string[] = [];
  const grpcEndpoints: Record<string, { address: string }> = {};
  const c = await startFarmChild(["sim", "--devices", String(devices), "--adb-port", String(adbPort), "--latency-profile", profile, ...extraArgs], (line) => {
    const serial = /^(emulator-\d+)(?: |$)/.exec(line)?.[1];
    if (serial) serials.push(serial);
    const grpcPort = / grpc_port=(\d+)/.exec(line)?.[1];
    if (serial && grpcPort) grpcEndpoints[serial] = { address: `127.0.0.1:${grpcPort}` };
    return line.startsWith("ready ");
  });
  return { child: c.process, serials, grpcEndpoints, close: () => c.close() };
}

/** The local farm's device source for `farm sim` children: the farm starts and stops the child with its other parts. */
export function simChildDevices(devices: number, profile: string, extraArgs: string[] = [], onStart?: (sims: SimChild) => void): LocalDeviceSource {
  return async (adbPort) => {
    const sims = await startSimChild(devices, adbPort, profile, extraArgs);
    onStart?.(sims);
    return { serials: sims.serials, grpcEndpoints: sims.grpcEndpoints, close: () => sims.close() };
  };
}
