import net from "node:net";
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
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    const done = (v: boolean) => {
      s.destroy();
      resolve(v);
    };
    s.setTimeout(1000, () => done(false));
    s.once("error", () => done(false));
    s.once("connect", () => s.write("000chost:version"));
    s.once("data", (b) => done(b.subarray(0, 4).toString() === "OKAY"));
  });
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

/** The server's `host:devices` list as serial → state (`device`, `offline`, …). */
export async function adbServerDevices(port: number, host = "127.0.0.1", timeoutMs = 2000): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host });
    let buf = Buffer.alloc(0);
    const fail = (e: Error) => {
      s.destroy();
      reject(e);
    };
    s.setTimeout(timeoutMs, () => fail(new Error(`adb server ${host}:${port} did not answer host:devices within ${timeoutMs} ms`)));
    s.once("error", fail);
    s.once("connect", () => s.write("000chost:devices"));
    s.on("data", (b) => {
      buf = Buffer.concat([buf, b]);
      if (buf.length >= 4 && buf.subarray(0, 4).toString() !== "OKAY") return fail(new Error(`adb server refused host:devices: ${buf.toString()}`));
      if (buf.length < 8) return;
      const len = parseInt(buf.subarray(4, 8).toString(), 16);
      if (buf.length < 8 + len) return;
      s.destroy();
      const devices = new Map<string, string>();
      for (const line of buf.subarray(8, 8 + len).toString().split("\n")) {
        const [serial, state] = line.split("\t");
        if (serial && state) devices.set(serial, state);
      }
      resolve(devices);
    });
  });
}
