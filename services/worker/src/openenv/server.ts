/**
 * The worker host's OpenEnv server (`farm worker --openenv-port P`): farm devices as OpenEnv environments, spoken
 * as OpenEnv's HTTP server speaks (meta-pytorch/OpenEnv 0.2.x, `HTTPEnvServer`), written here from the protocol.
 *
 *   GET  /health     {"status": "healthy"}
 *   GET  /metadata   {"name", "description", "version", "author", "documentation_url", "readme_content"}
 *   GET  /schema     {"action": <JSON schema>, "observation": <JSON schema>, "state": <JSON schema>}
 *   WS   /ws         one session per connection: reset / step / state / close messages (messages.ts)
 *
 * The stateless HTTP `POST /reset`, `POST /step` and `GET /state` (a fresh environment per request, closed after
 * it) are not served, as in OpenEnv's production mode: a device holds state between steps, so sessions live on
 * the WebSocket. A session leases one idle device of this host when the WebSocket opens (taken out of the
 * campaign pool) and gives it back when the session ends: a `close` message, the WebSocket closing or dropping
 * (client loss), no message for the idle timeout, or the worker closing. Bounded: sessions at once, the size
 * of a message, messages queued per session. Loopback by default; bound beyond it, the upgrade must carry
 * `Authorization: Bearer <token>`.
 */
import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { coerceError } from "@farm/errors";
import type { Logger } from "@farm/log";
import type { OpenEnvSessionEnd } from "@farm/metrics";
import { terminalSafe } from "@farm/terminal-text";
import { withDeadline } from "@farm/time";
import { EnvSession, type EnvSessionDeps } from "./env-session.ts";
import { OpenEnvError, parseAction, parseMessage, parseReset, type IncomingMessage as WsMessage } from "./messages.ts";
import { openEnvSchemas } from "./schemas.ts";

export interface OpenEnvServerOptions {
  host: string;
  port: number;
  /** Required when `host` is not loopback (config.ts checks). */
  token: string | undefined;
  /** A session with no message for this long ends and gives its device back. */
  idleTimeoutMs: number;
  maxSessions: number;
  /** The task a reset without `task` runs (undefined: `task` is required). */
  defaultTask?: string | undefined;
  /** Largest message a client may send (bytes). @default 1 MiB */
  maxMessageBytes?: number;
  /** The farm's version, in /metadata. */
  version: string;
  session: EnvSessionDeps;
  logger: Logger;
}

/** Messages a client may have waiting on its session before it is cut off. */
const MAX_QUEUED = 16;

interface Live {
  session: EnvSession;
  ws: WebSocket;
  queued: number;
  ending: Promise<void> | undefined;
  startedAtMs: number;
}

export class OpenEnvServer {
  private readonly sessions = new Map<string, Live>();
  private readonly http: Server;
  private readonly wss: WebSocketServer;
  private reaper: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  private boundPort = 0;
  private readonly log: Logger;

  private constructor(private readonly o: OpenEnvServerOptions) {
    this.log = o.logger.child({ component: "openenv" });
    this.wss = new WebSocketServer({ noServer: true, maxPayload: o.maxMessageBytes ?? 1024 * 1024 });
    this.http = createServer((req, res) => this.onHttp(req, res));
    this.http.on("upgrade", (req, socket, head) => this.onUpgrade(req, socket, head));
  }

  static async start(o: OpenEnvServerOptions): Promise<OpenEnvServer> {
    const s = new OpenEnvServer(o);
    s.boundPort = await new Promise<number>((resolve, reject) => {
      s.http.once("error", (e) => reject(new Error(`OpenEnv server: cannot listen on ${o.host}:${o.port}: ${e.message}`)));
      s.http.listen(o.port, o.host, () => {
        const a = s.http.address();
        resolve(typeof a === "object" && a ? a.port : o.port);
      });
    });
    const every = Math.max(100, Math.min(5000, Math.floor(o.idleTimeoutMs / 4)));
    s.reaper = setInterval(() => s.reapIdle(), every);
    s.reaper.unref();
    o.session.metrics.openenvSessions(0);
    s.log.info({ event: "openenv:listening", url: s.url, auth: o.token ? "token" : "none", idleTimeoutMs: o.idleTimeoutMs, maxSessions: o.maxSessions }, "OpenEnv server listening");
    return s;
  }

  /** http://host:port, the base URL OpenEnv clients take. */
  get url(): string {
    return `http://${this.o.host.includes(":") ? `[${this.o.host}]` : this.o.host}:${this.boundPort}`;
  }

  /** Open sessions and the device each holds (tests, status). */
  sessionDevices(): Record<string, string> {
    return Object.fromEntries([...this.sessions].map(([id, l]) => [id, l.session.serial]));
  }

  private authorized(req: IncomingMessage): boolean {
    const want = this.o.token;
    if (!want) return true;
    const v = req.headers.authorization;
    const m = typeof v === "string" ? /^Bearer\s+(.+)$/i.exec(v.trim()) : null;
    if (!m) return false;
    const a = Buffer.from(m[1]!);
    const b = Buffer.from(want);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  private pathOf(req: IncomingMessage): string {
    try {
      return new URL(req.url ?? "/", "http://x").pathname;
    } catch {
      return "/";
    }
  }

  private onHttp(req: IncomingMessage, res: ServerResponse): void {
    const send = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      res.end(text);
    };
    const p = this.pathOf(req);
    if (req.method === "GET" && p === "/health") return send(200, { status: this.closing ? "unhealthy" : "healthy" });
    if (req.method === "GET" && p === "/metadata") {
      const tasks = [...this.o.session.catalog.byId.keys()];
      return send(200, {
        name: "android-episode-farm",
        description: `Android devices of farm worker ${this.o.session.commit.workerName}: one device per WebSocket session (/ws); reset into a task or task family (data.task), step with AndroidWorld JSON actions or AndroidEnv touches; tasks: ${tasks.slice(0, 50).join(", ")}`,
        readme_content: null,
        version: this.o.version,
        author: null,
        documentation_url: null,
      });
    }
    if (req.method === "GET" && p === "/schema") return send(200, openEnvSchemas());
    if (p === "/reset" || p === "/step" || p === "/state") {
      return send(404, { detail: `${p} over HTTP is not served (OpenEnv's production mode): a device keeps state between steps, so each session is a WebSocket at /ws (send {"type": "reset", "data": {"task": ...}})` });
    }
    return send(404, { detail: "Not Found" });
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const refuse = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${status === 401 ? "Unauthorized" : status === 503 ? "Service Unavailable" : "Not Found"}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
    };
    if (this.pathOf(req) !== "/ws") return refuse(404, "only /ws takes WebSocket connections");
    if (this.closing) return refuse(503, "the worker is shutting down");
    if (!this.authorized(req)) {
      this.log.warn({ event: "openenv:unauthenticated", peer: terminalSafe(req.socket.remoteAddress ?? "") }, "OpenEnv connection without a valid token refused");
      return refuse(401, "this worker requires 'Authorization: Bearer <token>' (FARM_OPENENV_TOKEN)");
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws));
  }

  private sendJson(ws: WebSocket, msg: unknown): void {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
  }

  private sendError(ws: WebSocket, e: unknown): void {
    const err = e instanceof OpenEnvError ? e : new OpenEnvError("EXECUTION_ERROR", coerceError(e).message);
    if (!(e instanceof OpenEnvError)) this.log.error({ event: "openenv:request-failed", err: err.message }, "OpenEnv request failed");
    this.sendJson(ws, { type: "error", data: { message: err.message, code: err.wsCode, ...err.extra } });
  }

  private onConnection(ws: WebSocket): void {
    const m = this.o.session.metrics;
    const active = this.sessions.size;
    let session: EnvSession;
    try {
      if (active >= this.o.maxSessions) throw new OpenEnvError("CAPACITY_REACHED", `this worker serves at most ${this.o.maxSessions} OpenEnv sessions at once`, { active_sessions: active, max_sessions: this.o.maxSessions });
      session = EnvSession.open(this.o.session, { active, max: this.o.maxSessions });
    } catch (e) {
      m.openenvSessionEnded("error");
      this.sendError(ws, e);
      ws.close(1013, "no capacity");
      return;
    }
    const live: Live = { session, ws, queued: 0, ending: undefined, startedAtMs: Date.now() };
    this.sessions.set(session.id, live);
    m.openenvSessions(this.sessions.size);
    this.log.debug({ event: "openenv:session-open", session: session.id, serial: session.serial }, "OpenEnv session opened");
    ws.on("message", (data: RawData, isBinary: boolean) => {
      if (live.ending) return;
      if (isBinary) return this.sendError(ws, new OpenEnvError("INVALID_JSON", "messages are JSON text frames"));
      if (++live.queued > MAX_QUEUED) {
        this.sendError(ws, new OpenEnvError("SESSION_ERROR", `more than ${MAX_QUEUED} messages waiting; send the next after each answer`));
        void this.end(live, "error");
        return;
      }
      const text = Buffer.isBuffer(data) ? data.toString("utf8") : Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.from(data).toString("utf8");
      void session
        .exclusive(() => this.answer(live, text))
        .catch((e: unknown) => this.sendError(ws, e))
        .finally(() => live.queued--);
    });
    ws.on("close", () => void this.end(live, "client_lost"));
    ws.on("error", (e) => {
      this.log.debug({ event: "openenv:socket-error", session: session.id, err: e.message }, "OpenEnv socket error");
    });
  }

  private async answer(live: Live, text: string): Promise<void> {
    if (live.ending) return;
    let msg: WsMessage;
    try {
      msg = parseMessage(text);
    } catch (e) {
      return this.sendError(live.ws, e);
    }
    const s = live.session;
    switch (msg.type) {
      case "reset": {
        const req = parseReset(msg.data, this.o.defaultTask);
        this.sendJson(live.ws, { type: "observation", data: await s.reset(req) });
        return;
      }
      case "step": {
        const answer = parseAction(msg.data);
        this.sendJson(live.ws, { type: "observation", data: await s.step(answer) });
        return;
      }
      case "state":
        this.sendJson(live.ws, { type: "state", data: s.state() });
        return;
      case "close":
        // After the requests before it: end the session, then close the WebSocket (as OpenEnv's server does).
        void this.end(live, "close");
        return;
    }
  }

  /** Ends a session once: its episode ends (committed), its device goes back, the WebSocket closes. */
  private end(live: Live, reason: OpenEnvSessionEnd, closeCode = 1000, closeReason = ""): Promise<void> {
    live.ending ??= (async () => {
      const s = live.session;
      try {
        // The session's requests run one at a time: the release waits for the one running (bounded by its deadlines).
        await s.exclusive(() => s.close());
      } catch (e) {
        this.log.error({ event: "openenv:release-failed", session: s.id, err: coerceError(e).message }, "ending an OpenEnv session failed");
      }
      this.sessions.delete(s.id);
      const m = this.o.session.metrics;
      m.openenvSessions(this.sessions.size);
      m.openenvSessionEnded(reason);
      const st = s.state();
      this.log.info(
        { event: "openenv:session-end", session: s.id, serial: s.serial, reason, episodes: st.episodes, steps: s.steps, taskId: st.task_id, durationMs: Date.now() - live.startedAtMs },
        "OpenEnv session ended; device given back",
      );
      if (live.ws.readyState === live.ws.OPEN) live.ws.close(closeCode, closeReason);
    })();
    return live.ending;
  }

  private reapIdle(): void {
    const now = Date.now();
    for (const live of this.sessions.values()) {
      if (live.ending || live.session.active || now - live.session.lastActivityMs < this.o.idleTimeoutMs) continue;
      this.sendError(live.ws, new OpenEnvError("SESSION_ERROR", `session closed: no message for ${this.o.idleTimeoutMs} ms (the idle timeout); its device went back to the pool`));
      void this.end(live, "idle_timeout", 1001, "idle timeout");
    }
  }

  /** Stops taking sessions, ends every session (episodes committed, devices back) and closes the listener. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.reaper) clearInterval(this.reaper);
      await Promise.all([...this.sessions.values()].map((l) => this.end(l, "shutdown", 1001, "worker shutting down")));
      for (const c of this.wss.clients) c.terminate();
      this.wss.close();
      const closed = new Promise<void>((resolve) => this.http.close(() => resolve()));
      this.http.closeAllConnections();
      await withDeadline(closed, 2000, () => new Error("OpenEnv server close timed out")).catch(() => undefined);
    })();
    return this.closing;
  }
}
