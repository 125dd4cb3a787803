/** Test rig for the transport tests: a private adb server plus simulated devices, and an adb CLI runner. */
import { spawn } from "node:child_process";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices, type SimFleet } from "../src/index.ts";

export interface Rig {
  adb: LocalAdbServer;
  fleet: SimFleet;
  close(): Promise<void>;
}

export async function startRig(count: number): Promise<Rig> {
  const adb = await startAdbServer();
  try {
    const fleet = await startSimulatedDevices({ adbPort: adb.port, count });
    return {
      adb,
      fleet,
      async close() {
        await fleet.close();
        await adb.stop();
      },
    };
  } catch (e) {
    await adb.stop();
    throw e;
  }
}

export interface CliResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs the real adb CLI against the private server: `adb -P port -s serial args…`. */
export function adbCli(port: number, serial: string | undefined, args: string[], opts: { input?: Uint8Array | string; timeoutMs?: number } = {}): Promise<CliResult> {
  const full = ["-P", String(port), ...(serial ? ["-s", serial] : []), ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(process.env.ADB_BIN ?? "adb", full, { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 15_000);
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => (err += b.toString()));
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr: err });
    });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `check` every 20 ms until it holds or `timeoutMs` passes; returns whether it held. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
}
