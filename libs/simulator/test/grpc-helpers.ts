/** A simulated device with its gRPC endpoint, and promise-style @grpc/grpc-js clients for tests. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readFileSync } from "node:fs";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { emulatorGrpc, grpc, bearerMetadata, CLIENT_CHANNEL_OPTIONS } from "@farm/emulator-grpc";
import { SimDevice, startEmulatorGrpc, type EmulatorGrpcServer, type SimDeviceOptions } from "../src/index.ts";
import { sh } from "./android-helpers.ts";

export type Client = grpc.Client & Record<string, (...args: unknown[]) => unknown>;

export interface GrpcRig {
  adb: LocalAdbServer;
  snapshotRoot: string;
  start(opts?: Partial<SimDeviceOptions> & { token?: string }): Promise<{ device: SimDevice; server: EmulatorGrpcServer; ctl: Client; snap: Client }>;
  close(): Promise<void>;
}

export async function startGrpcRig(): Promise<GrpcRig> {
  const adb = await startAdbServer();
  const snapshotRoot = fs.mkdtempSync(path.join(os.tmpdir(), "sim-grpc-test-"));
  const devices: SimDevice[] = [];
  const clients: grpc.Client[] = [];
  return {
    adb,
    snapshotRoot,
    async start(opts = {}) {
      const { token, ...deviceOpts } = opts;
      const device = await SimDevice.start({ adbPort: adb.port, snapshotDir: path.join(snapshotRoot, `d${devices.length}`), ...deviceOpts });
      devices.push(device);
      const server = await startEmulatorGrpc(device, token === undefined ? {} : { token });
      const { EmulatorController, SnapshotService } = emulatorGrpc();
      const ctl = new EmulatorController(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), CLIENT_CHANNEL_OPTIONS) as Client;
      const snap = new SnapshotService(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), CLIENT_CHANNEL_OPTIONS) as Client;
      clients.push(ctl, snap);
      return { device, server, ctl, snap };
    },
    async close() {
      for (const c of clients) c.close();
      await Promise.all(devices.map((d) => d.close()));
      await adb.close();
      fs.rmSync(snapshotRoot, { recursive: true, force: true });
    },
  };
}

/** One unary call as a promise (rejects with the grpc ServiceError). */
export function call<T = any>(client: Client, method: string, req: unknown, token?: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const cb = (err: grpc.ServiceError | null, res: T) => (err ? reject(err) : resolve(res));
    const deadline = { deadline: Date.now() + 20_000 };
    if (token !== undefined) client[method]!(req, bearerMetadata(token), deadline, cb);
    else client[method]!(req, deadline, cb);
  });
}

export async function installAndStart(device: SimDevice, apk: string, component: string, config = "{}"): Promise<void> {
  const bytes = readFileSync(new URL(`../../../tasks/apks/${apk}`, import.meta.url));
  const r = device.android.installApk(bytes);
  if (!r.ok) throw new Error(`install ${apk}: ${r.code}`);
  const escaped = config.replace(/"/g, '\\"');
  const out = await sh(device.android, `am start -S -W -n ${component} --ez RL_TASK_ENABLED true --es RL_TASK_GAME_CONFIG "${escaped}"`);
  if (out.code !== 0 || out.out.includes("Error")) throw new Error(`start ${component}: ${out.out}${out.err}`);
}

export const G2048 = "com.tpcstld.twozerogame/com.tpcstld.twozerogame.MainActivity";
export const NOTES = "com.farm.simapps.notes/com.farm.simapps.notes.MainActivity";
export const CATCH = "com.example.catchtheball/com.example.catchtheball.MainActivity";

export function touch(x: number, y: number, pressure: number, identifier = 0) {
  return { x, y, pressure, identifier };
}
