/**
 * The scheduler's HTTP API (express 5):
 *
 *   GET  /healthz                 ok
 *   GET  /metrics                 Prometheus exposition (@farm/metrics registry)
 *   GET  /openapi.json            OpenAPI 3.1 document of this API, from the zod schemas that validate requests
 *   GET  /campaigns[?limit=N]     { campaigns: CampaignStatus[] }, newest first
 *   GET  /campaigns/:id           CampaignStatus
 *   POST /campaigns               CampaignInput → 201 { created: true, campaign } | 200 { created: false, campaign }
 *   POST /campaigns/:id/cancel    CampaignStatus
 *   GET  /campaigns/:id/policy-version   { campaignId, version?, versions }: the campaign's current policy version
 *   POST /campaigns/:id/policy-version   { version } → { campaignId, version, previous?, raised, versions } (409 VERSION_CONFLICT: it would go back)
 *   /ui                           bull-board for the queues
 *   GET  /, /fleet/*, /devices, /devices/:worker/:serial/screen   the fleet page (fleet-routes.ts)
 *   GET  /web/*, /view/*, /api/episodes/*, /report               shared assets, episode viewer, reports (web-pages.ts)
 *
 *   GET|POST /login, POST /logout  browser login (session cookie) for the queue UI
 *
 * Access (http-access.ts): a token and a non-loopback bind → every route but /healthz, /login (and
 * /metrics) needs the bearer token or the login cookie; a loopback bind → allowed Host names only,
 * state changes need the token (or, without one, a loopback peer); no state change from a foreign
 * Origin. Client garbage gets 400 (bad encoding, bad JSON), 405 (wrong method), 413 (body too large),
 * never 500. Errors are JSON: `{ error: { code, message } }`.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type NextFunction, type Request, type Response } from "express";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import { silentLogger, type Logger } from "@farm/log";
import type { MetricsSource } from "@farm/metrics";
import { HTTP_STATUS_OF, SchedulerError } from "./errors.ts";
import { createAccess } from "./http-access.ts";
import { CAMPAIGN_BODY_LIMIT, campaignListQuerySchema, clampListLimit } from "./campaign-spec.ts";
import { openApiDocument } from "./openapi.ts";
import { readFileSync } from "node:fs";

const FARM_VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
import { mountWebPages, WEB_PAGE_ROUTES } from "./web-pages.ts";
import { OPERATOR_ROUTES, operatorRoutes } from "./operator-routes.ts";
import type { FarmMetrics } from "@farm/metrics";
import type { Scheduler } from "./scheduler.ts";

export interface SchedulerHttpOptions {
  scheduler: Scheduler;
  metrics: MetricsSource;
  /** 0 = any free port. */
  port: number;
  /** Default 127.0.0.1. A non-loopback address requires `token`. */
  host?: string;
  token?: string;
  /** Host names clients may use besides loopback names and the bind address (FARM_API_ALLOWED_HOSTS). */
  allowedHosts?: readonly string[];
  /** Require the token for /metrics too on a non-loopback bind (FARM_API_PROTECT_METRICS). */
  protectMetrics?: boolean;
  log?: Logger;
  /** Trajectory folders the workers write: the episode viewer and reports read them (FARM_TRAJECTORIES). */
  trajectories?: readonly string[];
  /** How often the fleet page's charts sample Redis (default 10 s). */
  seriesSampleMs?: number;
  /** The operator role's tokens (FARM_OPERATOR_TOKENS): drive `human` episodes at /operate, nothing more. */
  operators?: readonly { name: string; token: string }[];
  /** Where the operator metrics go (the scheduler's FarmMetrics). */
  farmMetrics?: FarmMetrics;
}

export interface SchedulerHttp {
  port: number;
  url: string;
  close(): Promise<void>;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "::1", "localhost"]);

/** Routes and the methods they answer; other methods get 405 with an Allow header. */
export const ROUTE_METHODS: [string, string][] = [
  ["/healthz", "GET, HEAD"],
  ["/openapi.json", "GET, HEAD"],
  ["/metrics", "GET, HEAD"],
  ["/campaigns", "GET, HEAD, POST"],
  ["/campaigns/:id", "GET, HEAD"],
  ["/campaigns/:id/cancel", "POST"],
  ["/campaigns/:id/policy-version", "GET, HEAD, POST"],
  ["/campaigns/:id/stream/read", "POST"],
  ["/campaigns/:id/stream/ack", "POST"],
  ["/login", "GET, HEAD, POST"],
  ["/logout", "POST"],
  ["/", "GET, HEAD"],
  ["/favicon.ico", "GET, HEAD"],
  ["/fleet/fleet.js", "GET, HEAD"],
  ["/devices", "GET, HEAD"],
  ["/devices/:worker/:serial/screen", "GET, HEAD"],
  ...WEB_PAGE_ROUTES,
  ...OPERATOR_ROUTES,
];

/** Every route of the API and its pages (tests walk this list). `/ui/*` is bull-board's. */
export const SCHEDULER_ROUTES: readonly (readonly [path: string, allow: string])[] = ROUTE_METHODS;

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
  const access = createAccess({ token, host, allowedHosts: opts.allowedHosts ?? [], protectMetrics: opts.protectMetrics ?? false, ...(opts.operators ? { operators: opts.operators } : {}) }, sendError);
  app.use(access.guard);
  app.use(access.loginRoutes());

  const pages = await mountWebPages({ scheduler, sendError, login: !!token, log, ...(opts.trajectories ? { trajectories: opts.trajectories } : {}), ...(opts.seriesSampleMs ? { seriesSampleMs: opts.seriesSampleMs } : {}) });
  app.use(pages.router);
  const operate = operatorRoutes({ redis: scheduler.operatorRedis, prefix: scheduler.prefix, sendError, log, ...(opts.farmMetrics ? { metrics: opts.farmMetrics } : {}) });
  app.use(operate.router);
  app.get("/healthz", (_req, res) => {
    res.type("text/plain").send("ok\n");
  });
  app.get("/metrics", async (_req, res) => {
    const text = await opts.metrics.metricsText();
    res.set("content-type", opts.metrics.contentType).send(text);
  });
  const openapi = JSON.stringify(openApiDocument(FARM_VERSION));
  app.get("/openapi.json", (_req, res) => {
    res.type("application/json").send(openapi);
  });
  app.get("/campaigns", async (req, res) => {
    const { limit } = campaignListQuerySchema.parse({ limit: clampListLimit(req.query.limit) });
    res.json({ campaigns: await scheduler.list(limit) });
  });
  app.get("/campaigns/:id", async (req, res) => {
    res.json(await scheduler.status(String(req.params.id)));
  });
  app.post("/campaigns", express.json({ limit: CAMPAIGN_BODY_LIMIT, strict: true }), async (req, res) => {
    if (req.body === undefined) return sendError(res, 400, "SPEC_INVALID", "send the campaign as a JSON body (content-type: application/json)");
    const r = await scheduler.submit(req.body);
    res.status(r.created ? 201 : 200).json(r);
  });
  app.post("/campaigns/:id/cancel", async (req, res) => {
    res.json(await scheduler.cancel(String(req.params.id)));
  });
  app.get("/campaigns/:id/policy-version", async (req, res) => {
    res.json(await scheduler.policyVersion(String(req.params.id)));
  });
  app.post("/campaigns/:id/policy-version", express.json({ limit: "4kb", strict: true }), async (req, res) => {
    if (req.body === undefined) return sendError(res, 400, "SPEC_INVALID", 'send {"version": "..."} as a JSON body (content-type: application/json)');
    res.json(await scheduler.raisePolicyVersion(String(req.params.id), req.body));
  });
  // The campaign's stream of committed episodes through Redis consumer groups (issue 38; @farm/queue episode-stream.ts).
  app.post("/campaigns/:id/stream/read", express.json({ limit: "4kb", strict: true }), async (req, res) => {
    const b = (req.body ?? {}) as { group?: unknown; consumer?: unknown; count?: unknown; from?: unknown; after?: unknown };
    if (b.from !== undefined && b.from !== "pending" && b.from !== "new") return sendError(res, 400, "SPEC_INVALID", 'from: "pending" or "new" (absent: pending first, else new)');
    const from = b.from === "pending" ? { pendingAfter: String(b.after ?? "0") } : b.from === "new" ? ("new" as const) : undefined;
    res.json(await scheduler.streamRead(String(req.params.id), String(b.group ?? ""), String(b.consumer ?? ""), Number(b.count ?? 100), from));
  });
  app.post("/campaigns/:id/stream/ack", express.json({ limit: "64kb", strict: true }), async (req, res) => {
    const b = (req.body ?? {}) as { group?: unknown; ids?: unknown };
    if (!Array.isArray(b.ids)) return sendError(res, 400, "SPEC_INVALID", "ids: a list of stream entry ids");
    res.json(await scheduler.streamAck(String(req.params.id), String(b.group ?? ""), b.ids as string[]));
  });

  const board = new ExpressAdapter();
  board.setBasePath("/ui");
  createBullBoard({ queues: [new BullMQAdapter(scheduler.queue)], serverAdapter: board });
  app.use("/ui", board.getRouter());
  for (const [route, allow] of ROUTE_METHODS) {
    app.all(route, (req, res) => {
      res.set("allow", allow);
      sendError(res, 405, "METHOD_NOT_ALLOWED", `${req.method} is not allowed on ${route}; use ${allow}`);
    });
  }

  app.use((_req: Request, res: Response) => sendError(res, 404, "NOT_FOUND", "no such route; see GET /, /campaigns, /devices, /metrics, /healthz, /ui"));
  // Express 5 sends rejected async handlers here.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof SchedulerError) return sendError(res, HTTP_STATUS_OF[err.code], err.code, err.message);
    const e = err as { type?: string; status?: number; message?: string };
    if (e.type === "entity.parse.failed" || e.type === "entity.too.large") return sendError(res, e.status ?? 400, "SPEC_INVALID", `bad request body: ${e.message}`);
    // Client garbage (bad percent-encoding, bad charset, aborted body…): its own 4xx, never a 500.
    if (typeof e.status === "number" && e.status >= 400 && e.status < 500) {
      return sendError(res, e.status, e.status === 413 ? "TOO_LARGE" : "BAD_REQUEST", `bad request: ${String(e.message ?? "").slice(0, 200)}`);
    }
    if (err instanceof URIError) return sendError(res, 400, "BAD_REQUEST", "bad request: malformed percent-encoding in the URL");
    log.error({ event: "http:error", method: req.method, path: req.path, error: e.message }, "request failed");
    if (res.headersSent) return;
    sendError(res, 500, "INTERNAL", "internal error; see the scheduler's log");
  });

  const server: Server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(opts.port, host, (err?: Error) => (err ? reject(new Error(`scheduler API: cannot listen on ${host}:${opts.port}: ${err.message}`)) : resolve(s)));
  }).catch((e: unknown) => {
    pages.close();
    operate.close();
    throw e;
  });
  // Slow clients (slow-loris) cannot hold sockets for long: headers within 10 s, a whole request within 30 s.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  log.info({ event: "http:listening", url, auth: token ? "token-all-routes" : "loopback-only" }, "scheduler API listening");
  let closing: Promise<void> | undefined;
  return {
    port,
    url,
    close() {
      pages.close();
      operate.close();
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
