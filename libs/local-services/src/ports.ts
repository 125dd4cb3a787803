import net from "node:net";
import { sleep } from "@farm/time";

/** Ports that belong to services a developer may already run (adb 5037, Redis 6379, the adb scan range). */
export function isReservedPort(port: number): boolean {
  return port === 5037 || port === 6379 || (port >= 5554 && port <= 5585);
}

/** A currently free TCP port on 127.0.0.1, never one of the reserved ports. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = net.createServer();
      srv.unref();
      srv.on("error", reject);
      srv.listen(0, "127.0.0.1", () => {
        const addr = srv.address();
        const p = typeof addr === "object" && addr ? addr.port : 0;
        srv.close(() => resolve(p));
      });
    });
    if (!isReservedPort(port)) return port;
  }
}

/** Resolves once something accepts TCP connections on host:port, or rejects after timeoutMs. */
export async function waitForPort(port: number, timeoutMs: number, host = "127.0.0.1"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ port, host });
      s.once("connect", () => {
        s.destroy();
        resolve(true);
      });
      s.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${host}:${port} after ${timeoutMs} ms`);
    await sleep(25);
  }
}
