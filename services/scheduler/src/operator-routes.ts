/**
 * The operator page and its API (issue 37): people drive `human` episodes from the browser. The browser reaches
 * only the scheduler; the workers publish frames and views in Redis and read the lease holder's actions from it
 * (@farm/queue operator-relay.ts), so the devices may sit on any host.
 *
 *   GET  /operate                               the page: waiting episodes; ?episode=ID drives or watches one
 *   GET  /api/operator/episodes                 { operator, episodes: [WaitingEpisode & { leasedBy, mine }] }
 *   POST /api/operator/episodes/:id/lease       take (or take back) the episode: 200, 409 LEASED (another operator), 404 NOT_WAITING
 *   POST /api/operator/episodes/:id/release     leave it (the worker ends it operator_abandoned at once)
 *   POST /api/operator/episodes/:id/actions     { action, step, instruction? } → the worker (lease holder only: 403 NOT_LEASE_HOLDER)
 *   GET  /api/operator/episodes/:id/events      Server-Sent Events: hello (mode drive|watch), view, frame, end
 *
 * A lease lives PX graceMs in Redis and is renewed while its holder's event stream is open: a closed tab leaves
 * the lease to lapse after the grace period (reopened before, the same operator drives on where it was).
 * Who may call these: the admin token, or an operator's (http-access.ts: the operator role reaches nothing else).
 */
import express, { type Request, type Response, type Router } from "express";
import type { Logger } from "@farm/log";
import type { FarmMetrics } from "@farm/metrics";
import {
  LEASE_SCRIPT,
  MAX_ACTION_MESSAGE_CHARS,
  MAX_WAITING_LISTED,
  OPERATOR_EPISODE_PATTERN,
  RELEASE_SCRIPT,
  operatorActionBodySchema,
  operatorKeys,
  waitingEpisodeSchema,
  type OperatorActionMessage,
  type RedisClient,
  type WaitingEpisode,
} from "@farm/queue";
import { coerceError } from "@farm/errors";
import { terminalSafe } from "@farm/terminal-text";
import type { Principal } from "./http-access.ts";
import { pageHtml, PAGE_HEADERS } from "./web-assets.ts";

type SendError = (res: Response, status: number, code: string, message: string) => void;

export interface OperatorRoutesOptions {
  redis: { command: RedisClient; subscriber(): RedisClient };
  prefix: string;
  sendError: SendError;
  metrics?: FarmMetrics;
  log: Logger;
}

export const OPERATOR_ROUTES: [string, string][] = [
  ["/operate", "GET, HEAD"],
  ["/api/operator/episodes", "GET, HEAD"],
  ["/api/operator/episodes/:id/lease", "POST"],
  ["/api/operator/episodes/:id/release", "POST"],
  ["/api/operator/episodes/:id/actions", "POST"],
  ["/api/operator/episodes/:id/events", "GET"],
];

/** The OpenAPI path items of OPERATOR_ROUTES (openapi.ts spreads them into the document). */
export function operatorOpenApi(): Record<string, unknown> {
  const summaries: Record<string, string> = {
    "/operate": "the operator page: episodes waiting for an operator; ?episode=ID drives or watches one (HTML)",
    "/api/operator/episodes": "episodes waiting for an operator, with their goals and lease holders (JSON)",
    "/api/operator/episodes/{id}/lease": "take (or take back) an episode: 200, 409 LEASED, 404 NOT_WAITING",
    "/api/operator/episodes/{id}/release": "leave the episode you drive (it ends operator_abandoned)",
    "/api/operator/episodes/{id}/actions": "the lease holder's next action { action, step, instruction? }: 202, 403 NOT_LEASE_HOLDER, 409 STALE_STEP",
    "/api/operator/episodes/{id}/events": "Server-Sent Events of an episode: hello, view, frame, end",
  };
  const out: Record<string, unknown> = {};
  for (const [route, methods] of OPERATOR_ROUTES) {
    const p = route.replace(/:([A-Za-z]+)/g, "{$1}");
    const method = methods.startsWith("GET") ? "get" : "post";
    const type = p === "/operate" ? "text/html" : p.endsWith("/events") ? "text/event-stream" : "application/json";
    out[p] = {
      [method]: {
        operationId: `operator${p.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
        summary: summaries[p] ?? p,
        ...(p.includes("{id}") ? { parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }] } : {}),
        responses: { "200": { description: type, content: { [type]: { schema: { type: "string" } } } }, "403": { description: "not the lease holder, or a role that may not" } },
      },
    };
  }
  return out;
}

const KEEPALIVE_MS = 15_000;
/** Open event streams per scheduler (a bound on sockets held by pages). */
const MAX_STREAMS = 256;

/** The request's operator id: an operator's name, or `admin` for the admin token (it may drive too). */
function operatorOf(res: Response): string {
  const p = res.locals.principal as Principal | undefined;
  return p?.role === "operator" ? p.operator : "admin";
}

/** One subscriber connection for every open page; a channel is subscribed while a page listens to it. */
class Fanout {
  private sub: RedisClient | undefined;
  private readonly listeners = new Map<string, Set<(m: string) => void>>();
  constructor(private readonly make: () => RedisClient) {}

  async on(channel: string, fn: (m: string) => void): Promise<() => void> {
    if (!this.sub) {
      this.sub = this.make();
      this.sub.on("message", (ch: string, m: string) => {
        for (const l of this.listeners.get(ch) ?? []) l(m);
      });
      this.sub.on("error", () => undefined);
    }
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      await this.sub.subscribe(channel);
    }
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.listeners.get(channel) === set) {
        this.listeners.delete(channel);
        void this.sub?.unsubscribe(channel).catch(() => undefined);
      }
    };
  }

  close(): void {
    const s = this.sub;
    this.sub = undefined;
    this.listeners.clear();
    if (s) void s.quit().catch(() => s.disconnect());
  }
}

export function operatorRoutes(o: OperatorRoutesOptions): { router: Router; close(): void } {
  const keys = operatorKeys(o.prefix);
  const redis = o.redis.command;
  const fanout = new Fanout(o.redis.subscriber);
  const log = o.log.child({ component: "operator" });
  const streams = new Set<() => void>();
  const r = express.Router();

  const episodeParam = (req: Request, res: Response): string | undefined => {
    const id = String(req.params.id ?? "");
    if (OPERATOR_EPISODE_PATTERN.test(id)) return id;
    o.sendError(res, 400, "BAD_REQUEST", "the episode id must be <campaign id>-<index>");
    return undefined;
  };

  const waiting = async (id: string): Promise<WaitingEpisode | undefined> => {
    const text = await redis.hget(keys.waiting, id);
    if (!text) return undefined;
    const p = waitingEpisodeSchema.safeParse(safeJson(text));
    return p.success ? p.data : undefined;
  };

  /** 1 held by `who` now, 0 another operator holds it, -1 not waiting. */
  const lease = async (id: string, who: string, graceMs: number): Promise<number> => Number(await redis.eval(LEASE_SCRIPT, 2, keys.lease(id), keys.waiting, who, id, String(graceMs)));

  r.get("/operate", (_req, res) => {
    res.type("html").set(PAGE_HEADERS).send(pageHtml({ title: "farm: operate a device", page: "operate", assets: ["farm.css", "farm.js", "operate.js"] }));
  });

  r.get("/api/operator/episodes", async (_req, res) => {
    const me = operatorOf(res);
    const all = await redis.hgetall(keys.waiting);
    const list = Object.values(all)
      .map((t) => waitingEpisodeSchema.safeParse(safeJson(t)))
      .flatMap((p) => (p.success ? [p.data] : []))
      .sort((a, b) => a.since - b.since)
      .slice(0, MAX_WAITING_LISTED);
    const holders = list.length ? await redis.mget(...list.map((e) => keys.lease(e.episodeId))) : [];
    res.set("cache-control", "no-store").json({ operator: me, episodes: list.map((e, i) => ({ ...e, leasedBy: holders[i] ?? null, mine: holders[i] === me })) });
  });

  r.post("/api/operator/episodes/:id/lease", async (req, res) => {
    const id = episodeParam(req, res);
    if (!id) return;
    const me = operatorOf(res);
    const e = await waiting(id);
    if (!e) {
      o.metrics?.operatorLease("gone");
      return o.sendError(res, 404, "NOT_WAITING", `episode ${id} is not waiting for an operator (it ended, or its policy is not human)`);
    }
    const before = await redis.get(keys.lease(id));
    const got = await lease(id, me, e.graceMs);
    if (got === 1) {
      const result = before === me ? "renewed" : "granted";
      o.metrics?.operatorLease(result);
      log.info({ event: `operator:lease-${result}`, episodeId: id, operator: terminalSafe(me), worker: terminalSafe(e.worker), serial: terminalSafe(e.serial) }, "operator lease");
      return res.json({ leased: true, episodeId: id, operator: me, graceMs: e.graceMs, idleMs: e.idleMs });
    }
    o.metrics?.operatorLease(got === 0 ? "refused" : "gone");
    log.info({ event: "operator:lease-refused", episodeId: id, operator: terminalSafe(me), holder: got === 0 ? terminalSafe(before ?? "?") : undefined }, "operator lease refused");
    if (got === 0) return o.sendError(res, 409, "LEASED", `episode ${id} is driven by another operator; you may watch it (read-only)`);
    return o.sendError(res, 404, "NOT_WAITING", `episode ${id} is not waiting for an operator`);
  });

  r.post("/api/operator/episodes/:id/release", async (req, res) => {
    const id = episodeParam(req, res);
    if (!id) return;
    const me = operatorOf(res);
    if ((await redis.get(keys.lease(id))) !== me) return o.sendError(res, 403, "NOT_LEASE_HOLDER", `you do not drive episode ${id}`);
    // The worker hears of the release before it sees the lease gone (else it would take it for a lapsed grace).
    await redis.publish(keys.actions(id), JSON.stringify({ type: "release", operator: me, at: Date.now() }));
    await redis.eval(RELEASE_SCRIPT, 1, keys.lease(id), me);
    log.info({ event: "operator:released", episodeId: id, operator: terminalSafe(me) }, "operator left the episode");
    res.json({ released: true });
  });

  r.post("/api/operator/episodes/:id/actions", express.json({ limit: MAX_ACTION_MESSAGE_CHARS, strict: true }), async (req, res) => {
    const id = episodeParam(req, res);
    if (!id) return;
    const me = operatorOf(res);
    const body = operatorActionBodySchema.safeParse(req.body);
    if (!body.success) {
      o.metrics?.operatorAction("refused_bad");
      return o.sendError(res, 400, "ACTION_INVALID", `send { action: <AndroidWorld JSON action>, step: N, instruction?: text }: ${body.error.issues[0]?.message ?? "bad body"}`);
    }
    const holder = await redis.get(keys.lease(id));
    if (holder !== me) {
      o.metrics?.operatorAction("refused_not_holder");
      return o.sendError(res, 403, "NOT_LEASE_HOLDER", holder ? `episode ${id} is driven by another operator; watchers are read-only` : `take episode ${id} first (POST …/lease)`);
    }
    const e = await waiting(id);
    if (!e) return o.sendError(res, 404, "NOT_WAITING", `episode ${id} is not waiting for an operator`);
    if (body.data.step !== e.step) {
      o.metrics?.operatorAction("refused_stale");
      return o.sendError(res, 409, "STALE_STEP", `the episode is at step ${e.step}, the action was for step ${body.data.step}`);
    }
    await lease(id, me, e.graceMs); // any action renews the lease
    const msg: OperatorActionMessage & { type: "action" } = { type: "action", operator: me, ...body.data, at: Date.now() };
    await redis.publish(keys.actions(id), JSON.stringify(msg));
    o.metrics?.operatorAction("relayed");
    res.status(202).json({ relayed: true, step: e.step });
  });

  r.get("/api/operator/episodes/:id/events", async (req, res) => {
    const id = episodeParam(req, res);
    if (!id) return;
    const me = operatorOf(res);
    const e = await waiting(id);
    if (!e) return o.sendError(res, 404, "NOT_WAITING", `episode ${id} is not waiting for an operator`);
    if (streams.size >= MAX_STREAMS) return o.sendError(res, 503, "TOO_MANY_STREAMS", `at most ${MAX_STREAMS} operator pages may be open on this scheduler`);
    const holder = await redis.get(keys.lease(id));
    const mode = holder === me ? "drive" : "watch";
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", "x-accel-buffering": "no", connection: "keep-alive" });
    res.flushHeaders();
    const send = (event: string, data: string) => {
      if (!res.writableEnded) res.write(`event: ${event}\ndata: ${data}\n\n`);
    };
    send("hello", JSON.stringify({ mode, operator: me, holder, episode: e }));
    let closed = false;
    const off = await fanout.on(keys.events(id), (m) => {
      const type = /^\{"type":"(view|frame|end)"/.exec(m)?.[1];
      if (type) send(type, m);
      if (type === "end") stop();
    });
    const [view, frame] = await redis.mget(keys.view(id), keys.frame(id));
    if (view) send("view", view);
    if (frame) send("frame", frame.replace(/^\{/, '{"replay":true,')); // the last frame, not a live one (no latency figure)
    o.metrics?.operatorSession(mode, 1);
    log.info({ event: "operator:page-open", episodeId: id, operator: terminalSafe(me), mode }, "operator page opened");
    // The holder's open page keeps the lease; without it the lease lapses after the grace period.
    const renew =
      mode === "drive"
        ? setInterval(() => {
            lease(id, me, e.graceMs).then(
              (got) => {
                if (got !== 1) stop();
              },
              (err: unknown) => log.debug({ event: "operator:renew-failed", error: coerceError(err).message }, "lease renewal failed"),
            );
          }, Math.max(100, Math.floor(e.graceMs / 3)))
        : undefined;
    const keepalive = setInterval(() => res.write(": keepalive\n\n"), KEEPALIVE_MS);
    function stop(): void {
      if (closed) return;
      closed = true;
      streams.delete(stop);
      if (renew) clearInterval(renew);
      clearInterval(keepalive);
      off();
      o.metrics?.operatorSession(mode, -1);
      log.info({ event: "operator:page-closed", episodeId: id, operator: terminalSafe(me), mode }, "operator page closed");
      if (!res.writableEnded) res.end();
    }
    streams.add(stop);
    req.on("close", stop);
  });

  return {
    router: r,
    close() {
      for (const s of [...streams]) s();
      fanout.close();
    },
  };
}

function safeJson(t: string): unknown {
  try {
    return JSON.parse(t);
  } catch {
    return undefined;
  }
}
