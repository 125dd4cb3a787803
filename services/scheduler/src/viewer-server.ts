/**
 * `farm trajectories view PATH`: the episode viewer (and reports) over a local folder of Avro files or a Parquet
 * data set, on a small HTTP server bound to loopback only (Host names checked, as the scheduler's loopback mode).
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type Request, type Response } from "express";
import { openEpisodeSource, type EpisodeSource } from "@farm/dataset";
import { silentLogger, type Logger } from "@farm/log";
import { createAccess } from "./http-access.ts";
import { viewerRoutes } from "./viewer-routes.ts";
import { webAssetRouter, type PageLink } from "./web-assets.ts";

/** The port `farm report` links point at by default. */
export const DEFAULT_VIEWER_PORT = 8421;

export interface ViewerServerOptions {
  paths: readonly string[];
  /** 0 = a free port. */
  port: number;
  /** Loopback only: 127.0.0.1 (default), ::1 or localhost. */
  host?: string;
  log?: Logger;
  memoryBudgetBytes?: number;
}

export interface ViewerServer {
  url: string;
  port: number;
  source: EpisodeSource;
  close(): Promise<void>;
}

const PAGES: readonly PageLink[] = [
  { id: "episodes", href: "/view/", title: "episodes" },
  { id: "reports", href: "/report", title: "reports" },
];

function sendError(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ error: { code, message } });
}

export async function startViewerServer(o: ViewerServerOptions): Promise<ViewerServer> {
  const host = o.host ?? "127.0.0.1";
  if (!["127.0.0.1", "::1", "localhost"].includes(host)) throw new Error(`the viewer serves loopback only (127.0.0.1, ::1, localhost), not ${host}: it has no login`);
  const log = (o.log ?? silentLogger).child({ component: "viewer" });
  const source = await openEpisodeSource(o.paths, o.memoryBudgetBytes !== undefined ? { memoryBudgetBytes: o.memoryBudgetBytes } : {});
  const app = express();
  app.disable("x-powered-by");
  const access = createAccess({ token: undefined, host }, sendError);
  app.use(access.guard);
  app.get("/", (_req, res) => res.redirect(302, "/view/"));
  app.get("/favicon.ico", (_req, res) => res.status(204).end());
  app.use(webAssetRouter({ login: false, pages: PAGES }));
  app.use(viewerRoutes({ source, sendError, log, paths: o.paths }));
  app.use((_req: Request, res: Response) => sendError(res, 404, "NOT_FOUND", "no such route; see /view/"));
  app.use((err: unknown, req: Request, res: Response, _next: express.NextFunction) => {
    const e = err as { status?: number; message?: string };
    if (typeof e.status === "number" && e.status >= 400 && e.status < 500) return sendError(res, e.status, "BAD_REQUEST", `bad request: ${String(e.message ?? "").slice(0, 200)}`);
    log.error({ event: "viewer:error", path: req.path, error: e.message }, "request failed");
    if (!res.headersSent) sendError(res, 500, "INTERNAL", `internal error: ${String(e.message ?? "").slice(0, 300)}`);
  });
  let server: Server;
  try {
    server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(o.port, host, (err?: Error) => (err ? reject(new Error(`viewer: cannot listen on ${host}:${o.port}: ${err.message} (choose another with --port, 0 = any free one)`)) : resolve(s)));
    });
  } catch (e) {
    source.close();
    throw e;
  }
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}/`;
  log.info({ event: "viewer:listening", url, source: source.label }, "viewer listening");
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    source,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }).then(() => source.close());
      return closing;
    },
  };
}
