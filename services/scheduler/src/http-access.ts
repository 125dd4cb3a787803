/**
 * Who may use the scheduler's HTTP API (mounted before every route by http.ts).
 *
 * Token mode (FARM_API_TOKEN set), whatever the bind: every route except /healthz, /login (and /metrics
 * unless protectMetrics) needs `Authorization: Bearer <token>`, HTTP basic auth with the token as the
 * password (any user name), or the session cookie the login page sets. A browser cannot send a bearer
 * header to the fleet page or the queue UI, so /login takes the token once and sets an HttpOnly,
 * SameSite=Strict cookie; the pages and the UI's buttons then work.
 * No token (loopback binds only): reads are open, state changes must come from a loopback peer.
 * Loopback binds: requests must name an allowed Host (loopback names, the bind address,
 * FARM_API_ALLOWED_HOSTS), which defeats DNS rebinding.
 * Either mode: a state change carrying a foreign Origin (or Sec-Fetch-Site: cross-site) is refused,
 * which defeats cross-site form posts (CSRF).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import express, { type NextFunction, type Request, type Response, type Router } from "express";

export const SESSION_COOKIE = "farm_session";
const SESSION_TTL_MS = 12 * 60 * 60_000;
const MAX_SESSIONS = 1000;
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];

export interface AccessOptions {
  token: string | undefined;
  /** The bind address. */
  host: string;
  /** Extra Host names clients may use (FARM_API_ALLOWED_HOSTS). */
  allowedHosts?: readonly string[];
  /** Require the token for /metrics too when exposed (default false: Prometheus scrapes it). */
  protectMetrics?: boolean;
}

export type SendError = (res: Response, status: number, code: string, message: string) => void;

export function isLoopbackAddress(addr: string | undefined): boolean {
  return addr !== undefined && (addr === "::1" || addr.startsWith("127.") || addr.startsWith("::ffff:127.") || addr === "localhost");
}

function digest(s: string): Buffer {
  return createHash("sha256").update(s).digest();
}

const isSafeMethod = (m: string) => m === "GET" || m === "HEAD" || m === "OPTIONS";

/** The host name of a Host header (`name`, `name:port`, `[v6]:port`), lower-cased; undefined when malformed. */
export function hostNameOf(hostHeader: string | undefined): string | undefined {
  if (!hostHeader || hostHeader.length > 300) return undefined;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9._-]+))(?::(\d{1,5}))?$/.exec(hostHeader);
  if (!m) return undefined;
  return (m[1] ?? m[2] ?? "").toLowerCase().replace(/\.$/, "");
}

function cookieValue(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header || header.length > 8192) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export interface Access {
  /** Mounted first: Host, Origin and authentication checks. */
  guard(req: Request, res: Response, next: NextFunction): void;
  /** GET/POST /login and POST /logout. */
  loginRoutes(): Router;
  /** True when the bind is beyond loopback (no Host check then; a token is required). */
  readonly exposed: boolean;
}

export function createAccess(opts: AccessOptions, sendError: SendError): Access {
  const token = opts.token;
  const exposed = !!token && !isLoopbackAddress(opts.host) && opts.host !== "localhost";
  const allowedHosts = new Set([...LOOPBACK_NAMES, opts.host, ...(opts.allowedHosts ?? [])].map((h) => h.toLowerCase().replace(/^\[(.*)\]$/, "$1")));
  /** session id digest (hex) → expiry */
  const sessions = new Map<string, number>();

  const tokenMatches = (given: string) => !!token && timingSafeEqual(digest(given), digest(token));
  const bearerOk = (req: Request) => {
    const m = /^Bearer ([!-~]{1,4096})$/.exec(req.get("authorization") ?? "");
    return !!m?.[1] && tokenMatches(m[1]);
  };
  /** Basic auth: any user name, the token as the password (for tools that only speak basic auth). */
  const basicOk = (req: Request) => {
    const m = /^Basic ([A-Za-z0-9+/=]{1,6000})$/.exec(req.get("authorization") ?? "");
    if (!m?.[1]) return false;
    const decoded = Buffer.from(m[1], "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    return colon >= 0 && tokenMatches(decoded.slice(colon + 1));
  };
  const sessionOk = (req: Request) => {
    const id = cookieValue(req, SESSION_COOKIE);
    if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return false;
    const key = digest(id).toString("hex");
    const expires = sessions.get(key);
    if (expires === undefined) return false;
    if (expires < Date.now()) {
      sessions.delete(key);
      return false;
    }
    return true;
  };
  const newSession = (): string => {
    const id = randomBytes(32).toString("base64url");
    if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value!); // oldest first
    sessions.set(digest(id).toString("hex"), Date.now() + SESSION_TTL_MS);
    return id;
  };

  /** A state change must not come from another site (CSRF) — whatever credentials it carries. */
  const foreignOrigin = (req: Request): string | undefined => {
    if (req.get("sec-fetch-site") === "cross-site") return "a cross-site request (Sec-Fetch-Site)";
    const origin = req.get("origin");
    if (origin === undefined) return undefined;
    let u: URL;
    try {
      u = new URL(origin);
    } catch {
      return `Origin ${JSON.stringify(origin.slice(0, 100))}`;
    }
    if (u.host === req.get("host")) return undefined;
    if (allowedHosts.has(u.hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1"))) return undefined;
    return `Origin ${u.origin}`;
  };

  const wantsHtml = (req: Request) => req.method === "GET" && /text\/html/.test(req.get("accept") ?? "");
  const open = (path: string) => path === "/healthz" || path === "/login" || path === "/favicon.ico" || (!opts.protectMetrics && path === "/metrics");

  const guard = (req: Request, res: Response, next: NextFunction): void => {
    if (!exposed) {
      const name = hostNameOf(req.get("host"));
      if (!name || !allowedHosts.has(name)) {
        return sendError(res, 403, "HOST_NOT_ALLOWED", `Host ${JSON.stringify(String(req.get("host") ?? "").slice(0, 100))} is not served here; use 127.0.0.1 or localhost, or list the name in FARM_API_ALLOWED_HOSTS`);
      }
    }
    if (!isSafeMethod(req.method)) {
      const foreign = foreignOrigin(req);
      if (foreign) return sendError(res, 403, "FOREIGN_ORIGIN", `${foreign} may not change state here`);
    }
    if (open(req.path)) return next();
    const authed = !!token && (bearerOk(req) || basicOk(req) || sessionOk(req));
    if (token && !authed) {
      if (wantsHtml(req)) return res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl.slice(0, 1000))}`);
      return sendError(res, 401, "UNAUTHORIZED", "an API token is configured, so every request needs it: send Authorization: Bearer <FARM_API_TOKEN> (browsers: log in at /login)");
    }
    if (!token && !isSafeMethod(req.method) && !isLoopbackAddress(req.socket.remoteAddress)) {
      return sendError(res, 403, "FORBIDDEN", "no API token is configured, so state changes are accepted from loopback only");
    }
    next();
  };

  const loginRoutes = (): Router => {
    const r = express.Router();
    const page = (message: string, next: string) =>
      `<!doctype html><html><head><meta charset="utf-8"><title>farm scheduler: log in</title></head><body>` +
      `<h1>Android episode farm</h1><p>${message}</p><form method="post" action="/login">` +
      `<input type="hidden" name="next" value="${escapeHtml(next)}">` +
      `<label>API token <input type="password" name="token" autocomplete="current-password" autofocus></label> ` +
      `<button type="submit">Log in</button></form></body></html>`;
    r.get("/login", (req, res) => {
      res.type("html").set("cache-control", "no-store").send(page(token ? "Enter the scheduler's API token (FARM_API_TOKEN)." : "No API token is configured; nothing to log in to.", safeNext(req.query.next)));
    });
    r.post("/login", express.urlencoded({ extended: false, limit: "8kb", parameterLimit: 10 }), (req, res) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const next = safeNext(body.next);
      if (!token || typeof body.token !== "string" || !tokenMatches(body.token)) {
        res.status(401).type("html").send(page("Wrong token.", next));
        return;
      }
      res.cookie(SESSION_COOKIE, newSession(), { httpOnly: true, sameSite: "strict", secure: req.secure, path: "/", maxAge: SESSION_TTL_MS });
      res.redirect(303, next);
    });
    r.post("/logout", (req, res) => {
      const id = cookieValue(req, SESSION_COOKIE);
      if (id) sessions.delete(digest(id).toString("hex"));
      res.clearCookie(SESSION_COOKIE, { path: "/" });
      res.redirect(303, "/login");
    });
    return r;
  };

  return { guard, loginRoutes, exposed };
}

/** Only local paths: never `//evil.example` or `https://…` (open redirect). */
function safeNext(v: unknown): string {
  return typeof v === "string" && /^\/(?![/\\])[!-~]{0,1000}$/.test(v) ? v : "/";
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
