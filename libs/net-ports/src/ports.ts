import net from "node:net";
import { FarmError } from "@farm/errors";
import { pollUntil } from "@farm/time";

export type PortErrorCode = "port_timeout" | "no_free_port";

export class PortError extends FarmError<PortErrorCode> {
  override readonly name = "PortError";
}

/** Ports that belong to services a developer may already run (adb 5037, Redis 6379, the adb scan range). */
export function isReservedPort(port: number): boolean {
  return port === 5037 || port === 6379 || (port >= 5554 && port <= 5585);
}

/** The port the kernel picks for a listener on 127.0.0.1:0, released again at once. */
function kernelPort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const p = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(p));
    });
  });
}

/** A currently free TCP port on 127.0.0.1, never one of the reserved ports. */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 1000; i++) {
    const port = await kernelPort();
    if (!isReservedPort(port)) return port;
  }
  throw new PortError("no_free_port", "the kernel offered only reserved ports 1000 times; free some loopback ports");
}

/** True when nothing listens on 127.0.0.1:port (we could bind it exclusively just now). */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once("error", () => resolve(false));
    srv.listen({ port, host: "127.0.0.1", exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/**
 * Makes `server` listen on a free port (never a reserved one) of `host` and returns it. Another process may take
 * the port between the probe and our listen; that EADDRINUSE is retried (20 times), any other listen error rejects.
 */
export async function listenOnFreePort(server: net.Server, host = "127.0.0.1"): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const ok = await new Promise<boolean>((resolve, reject) => {
      const onError = (e: NodeJS.ErrnoException) => (e.code === "EADDRINUSE" && attempt < 20 ? resolve(false) : reject(e));
      server.once("error", onError);
      server.listen(port, host, () => {
        server.off("error", onError);
        resolve(true);
      });
    });
    if (ok) return port;
  }
}

function accepts(port: number, host: string): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const s = net.connect({ port, host });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** Resolves once something accepts TCP connections on host:port, or rejects after timeoutMs. */
export async function waitForPort(port: number, timeoutMs: number, host = "127.0.0.1"): Promise<void> {
  const ok = await pollUntil(() => accepts(port, host), { timeoutMs, intervalMs: 25 });
  if (!ok) throw new PortError("port_timeout", `nothing listens on ${host}:${port} after ${timeoutMs} ms; did the service start?`);
}
