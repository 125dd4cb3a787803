import { listDevices, serverVersion } from "@farm/adb-wire";
import { startManagedChild, type ManagedChild } from "./child.ts";
import { freePort } from "@farm/net-ports";
import { sleep } from "@farm/time";

export interface LocalAdbServer {
  readonly port: number;
  /** Restarts the server on the same port (devices must re-register, as with a real restart). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** True when an adb server answers host:version on the port. */
export async function adbServerAnswers(port: number, host = "127.0.0.1"): Promise<boolean> {
  return serverVersion({ host, port }, { timeoutMs: 1000 }).then(
    () => true,
    () => false,
  );
}

async function waitForAdb(port: number, child: ManagedChild, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await adbServerAnswers(port))) {
    if (child.process.exitCode !== null || Date.now() > deadline) {
      await child.close();
      throw new Error(`adb server did not start on port ${port} (is the Debian package adb installed? run: bash deploy/bootstrap.sh)\n${child.output()}`);
    }
    await sleep(25);
  }
}

/**
 * Starts a private adb server (`adb -P PORT nodaemon server`) as a child process on a free port.
 * The start-up scan of 5555..5585 is narrowed to nothing so it never grabs another server's devices.
 */
export async function startAdbServer(opts: { port?: number; /** The adb executable. Default `adb` on PATH. */ bin?: string } = {}): Promise<LocalAdbServer> {
  const port = opts.port ?? (await freePort());
  const bin = opts.bin ?? "adb";
  // The child inherits this process's environment (PATH, HOME) with its port pinned.
  const env = { ...process.env, ADB_LOCAL_TRANSPORT_MAX_PORT: "5553", ANDROID_ADB_SERVER_PORT: String(port) };
  const launch = async () => {
    const c = startManagedChild(bin, ["-P", String(port), "nodaemon", "server"], env);
    await waitForAdb(port, c, 10_000);
    return c;
  };
  let child = await launch();
  return {
    port,
    async restart() {
      await child.close();
      child = await launch();
    },
    async close() {
      await child.close();
    },
  };
}

/** The server's `host:devices` list as serial → state (`device`, `offline`, …); rejects with an AdbWireError. */
export function adbServerDevices(port: number, host = "127.0.0.1", timeoutMs = 2000): Promise<Map<string, string>> {
  return listDevices({ host, port }, { timeoutMs });
}
