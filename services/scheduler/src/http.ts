/**
 * The scheduler's HTTP API (express 5):
 *
 *   GET  /healthz                 ok
 *   GET  /metrics                 Prometheus exposition (@farm/metrics registry)
 *   GET  /campaigns[?limit=N]     { campaigns: CampaignStatus[] }, newest first
 *   GET  /campaigns/:id           CampaignStatus
 *   POST /campaigns               CampaignInput → 201 { created: true, campaign } | 200 { created: false, campaign }
 *   POST /campaigns/:id/cancel    CampaignStatus
 *   /ui                           bull-board for the queues
 *
 * Auth: with a token (FARM_API_TOKEN) every state change (POST, and any non-GET under /ui — bull-board
 * can retry and delete jobs) needs `Authorization: Bearer <token>`. Without a token the server may only
 * bind a loopback address and refuses state changes from non-loopback peers. Reads are open to whoever
 * can reach the bind address. Errors are JSON: `{ error: { code, message } }`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type NextFunction, type Request, type Response } from "express";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import { silentLogger, type Logger } from "@farm/log";
import type { MetricsSource } from "@farm/metrics";
import { HTTP_STATUS_OF, SchedulerError } from "./errors.ts";
import type { Scheduler } from "./scheduler.ts";

export interface SchedulerHttpOptions {
  scheduler: Scheduler;
  metrics: MetricsSource;
  /** 0 = any free port. */
  port: number;
  /** Default 127.0.0.1. A non-loopback address requires `token`. */
  host?: string;
  token?: string;
  log?: Logger;
}

export interface SchedulerHttp {
  port: number;
  url: string;
  close(): Promise<void>;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "::1", "localhost"]);

function isLoopbackPeer(addr: string | undefined): boolean {
  return addr !== undefined && (addr === "::1" || addr.startsWith("127.") || addr.startsWith("::ffff:127."));
}

function digest(s: string): Buffer {
  return createHash("sha256").update(s).digest();
}

function sendError(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ error: { code, message } });
}

export async function startSchedulerHttp(opts: SchedulerHttpOptions): Promise<SchedulerHttp> {
  const host = opts.host ?? "127.0.0.1";
  const token = opts.token === "" ? undefined : opts.token;
  if (!token && !LOOPBACK_HOSTS.has(host)) {
    throw new Error(`refusing to serve the scheduler API on ${host} without a token: set FARM_API_TOKEN or bind 127.0.0.1`);
  }
  const log = (opts.log ?? silentLogger).child({ component: "scheduler-http" });
  const { scheduler } = opts;
  const app = express();
  app.disable("x-powered-by");

  /** Guards state changes: bearer token if configured, else loopback peers only. */
  const requireWriteAccess = (req: Request, res: Response, next: NextFunction): void => {
    if (token) {
      const m = /^Bearer (.+)$/.exec(req.get("authorization") ?? "");
      if (!m?.[1] || !timingSafeEqual(digest(m[1]), digest(token))) {
        return sendError(res, 401, "UNAUTHORIZED", "this request changes state: send Authorization: Bearer <FARM_API_TOKEN>");
      }
    } else if (!isLoopbackPeer(req.socket.remoteAddress)) {
      return sendError(res, 403, "FORBIDDEN", "no API token is configured, so state changes are accepted from loopback only");
    }
    next();
  };

  app.get("/healthz", (_req, res) => {
    res.type("text/plain").send("ok\n");
  });
  app.get("/metrics", async (_req, res) => {
    const text = await opts.metrics.metricsText();
    res.set("content-type", opts.metrics.contentType).send(text);
  });
  app.get("/campaigns", async (req, res) => {
    const limit = Math.min(1000, Math.max(1, Number(req.query.limit ?? 100) || 100));
    res.json({ campaigns: await scheduler.list(limit) });
  });
  app.get("/campaigns/:id", async (req, res) => {
    res.json(await scheduler.status(String(req.params.id)));
  });
  app.post("/campaigns", requireWriteAccess, express.json({ limit: "64kb" }), async (req, res) => {
    if (req.body === undefined) return sendError(res, 400, "SPEC_INVALID", "send the campaign as a JSON body (content-type: application/json)");
    const r = await scheduler.submit(req.body);
    res.status(r.created ? 201 : 200).json(r);
  });
  app.post("/campaigns/:id/cancel", requireWriteAccess, async (req, res) => {
    res.json(await scheduler.cancel(String(req.params.id)));
  });

  const board = new ExpressAdapter();
  board.setBasePath("/ui");
  createBullBoard({ queues: [new BullMQAdapter(scheduler.queue)], serverAdapter: board });
  app.use("/ui", (req, res, next) => (req.method === "GET" || req.method === "HEAD" ? next() : requireWriteAccess(req, res, next)), board.getRouter());

  app.use((_req: Request, res: Response) => sendError(res, 404, "NOT_FOUND", "no such route; see GET /campaigns, /metrics, /healthz, /ui"));
  // Express 5 sends rejected async handlers here.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof SchedulerError) return sendError(res, HTTP_STATUS_OF[err.code], err.code, err.message);
    const e = err as { type?: string; status?: number; message?: string };
    if (e.type === "entity.parse.failed" || e.type === "entity.too.large") return sendError(res, e.status ?? 400, "SPEC_INVALID", `bad request body: ${e.message}`);
    log.error({ event: "http:error", method: req.method, path: req.path, error: e.message }, "request failed");
    sendError(res, 500, "INTERNAL", e.message ?? "internal error");
  });

  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(opts.port, host, (err?: Error) => (err ? reject(new Error(`scheduler API: cannot listen on ${host}:${opts.port}: ${err.message}`)) : resolve(s)));
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  log.info({ event: "http:listening", url, auth: token ? "token" : "loopback-only" }, "scheduler API listening");
  let closing: Promise<void> | undefined;
  return {
    port,
    url,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
