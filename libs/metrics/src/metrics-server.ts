/**
 * The `/metrics` endpoint on node:http: `GET /metrics` (the registry's exposition text and content
 * type) and `GET /healthz`. Binds 127.0.0.1 unless told otherwise: a scrape endpoint is not for the
 * open network by default. Port 0 picks a free port (never one reserved for adb or Redis).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { coerceError } from "@farm/errors";
import { listenOnFreePort } from "@farm/net-ports";

/** What the server needs from FarmMetrics; anything with an exposition text works. */
export interface MetricsSource {
  metricsText(): Promise<string>;
  readonly contentType: string;
}

export interface MetricsServerOptions {
  port: number;
  host?: string;
  metrics: MetricsSource;
  /** `/healthz` answers 503 while this returns false. Default: always healthy. */
  healthy?: () => boolean | Promise<boolean>;
  /**
   * More GET routes of the same server (e.g. the worker's device screens): returns true when it
   * answered the request. Consulted for paths other than /metrics and /healthz.
   */
  extraRoute?: (path: string, req: IncomingMessage, res: ServerResponse) => boolean;
}

export interface MetricsServer {
  port: number;
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  const host = opts.host ?? "127.0.0.1";
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    if (path === "/metrics") {
      opts.metrics.metricsText().then(
        (text) => res.writeHead(200, { "content-type": opts.metrics.contentType }).end(req.method === "HEAD" ? undefined : text),
        (e: unknown) => res.writeHead(500, { "content-type": "text/plain" }).end(`metrics collection failed: ${coerceError(e).message}\n`),
      );
      return;
    }
    if (path === "/healthz") {
      Promise.resolve(opts.healthy?.() ?? true).then(
        (ok) => res.writeHead(ok ? 200 : 503, { "content-type": "text/plain" }).end(ok ? "ok\n" : "unhealthy\n"),
        () => res.writeHead(503, { "content-type": "text/plain" }).end("unhealthy\n"),
      );
      return;
    }
    if (opts.extraRoute?.(path ?? "/", req, res)) return;
    res.writeHead(404, { "content-type": "text/plain" }).end("not found: try /metrics or /healthz\n");
  });

  const port = await listen(server, opts.port, host);
  let closing: Promise<void> | undefined;
  return {
    port,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    close() {
      // Idempotent; drops keep-alive connections so close does not wait for the scraper.
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Port 0 means a free one that is not adb's, Redis's or the emulator range's (other tools own those). */
async function listen(server: Server, port: number, host: string): Promise<number> {
  try {
    if (port === 0) return await listenOnFreePort(server, host);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    return port;
  } catch (e) {
    throw new Error(`metrics server: cannot listen on ${host}:${port}: ${coerceError(e).message}`, { cause: e });
  }
}
