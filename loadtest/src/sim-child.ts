/**
 * Simulated emulators in a child process (`farm sim`), as real emulators are never inside the
 * measuring process: its CPU and event loop stay separate from the code under test.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { LocalDeviceSource } from "@farm/local-farm";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface SimChild {
  child: ChildProcess;
  serials: string[];
  /** serial → the device's emulator gRPC endpoint (`127.0.0.1:<grpc_port>`), for devices that serve one. */
  grpcEndpoints: Record<string, { address: string }>;
  stop(): Promise<void>;
}

/** `farm sim --devices N --adb-port P [extra args, e.g. --screen WxH]` as a child; resolves with its serials once every device is online. */
export async function startSimChild(devices: number, adbPort: number, profile: string, extraArgs: string[] = []): Promise<SimChild> {
  const child = spawn(process.execPath, [path.join(REPO, "services/cli/bin/farm.js"), "sim", "--devices", String(devices), "--adb-port", String(adbPort), "--latency-profile", profile, ...extraArgs], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, FARM_LOG_LEVEL: "warn" },
  });
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-5000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const serials: string[] = [];
  const grpcEndpoints: Record<string, { address: string }> = {};
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const serial = /^(emulator-\d+)(?: |$)/.exec(line)?.[1];
      if (serial) serials.push(serial);
      const grpcPort = / grpc_port=(\d+)/.exec(line)?.[1];
      if (serial && grpcPort) grpcEndpoints[serial] = { address: `127.0.0.1:${grpcPort}` };
      if (line.startsWith("ready ")) resolve();
    });
    void exited.then(() => reject(new Error(`farm sim exited early:\n${err}`)));
  });
  return {
    child,
    serials,
    grpcEndpoints,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}


/** The local farm's device source for `farm sim` children: the farm starts and stops the child with its other parts. */
export function simChildDevices(devices: number, profile: string, extraArgs: string[] = [], onStart?: (sims: SimChild) => void): LocalDeviceSource {
  return async (adbPort) => {
    const sims = await startSimChild(devices, adbPort, profile, extraArgs);
    onStart?.(sims);
    return { serials: sims.serials, grpcEndpoints: sims.grpcEndpoints, close: () => sims.stop() };
  };
}
