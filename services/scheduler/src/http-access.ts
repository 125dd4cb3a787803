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
 * The parts: the token check (http-auth.ts), sessions and the cross-site check (http-sessions.ts), the login
 * page (http-login.ts); this module decides which a request needs.
 */
import type { NextFunction, Request, Response, Router } from "express";
import { OperatorTokens, TokenAuth } from "./http-auth.ts";
import { isOperatorPath, loginRoutes } from "./http-login.ts";
import { foreignOrigin, Sessions } from "./http-sessions.ts";

export { SESSION_COOKIE } from "./http-sessions.ts";
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];

export interface AccessOptions {
  token: string | undefined;
  /** The bind address. */
  host: string;
  /** Extra Host names clients may use (FARM_API_ALLOWED_HOSTS). */
  allowedHosts?: readonly string[];
  /** Require the token for /metrics too when exposed (default false: Prometheus scrapes it). */
  protectMetrics?: boolean;
  /** The operator role's tokens (FARM_OPERATOR_TOKENS): /operate and /api/operator/* only. */
  operators?: readonly { name: string; token: string }[];
}

/** Who made the request (`res.locals.principal`): the admin token (or no token on loopback), or a named operator. */
export type Principal = { role: "admin" } | { role: "operator"; operator: string };

export type SendError = (res: Response, status: number, code: string, message: string) => void;

export function isLoopbackAddress(addr: string | undefined): boolean {
  return addr !== undefined && (addr === "::1" || addr.startsWith("127.") || addr.startsWith("::ffff:127.") || addr === "localhost");
}

const isSafeMethod = (m: string) => m === "GET" || m === "HEAD" || m === "OPTIONS";

/** The host name of a Host header (`name`, `name:port`, `[v6]:port`), lower-cased; undefined when malformed. */
export function hostNameOf(hostHeader: string | undefined): string | undefined {
  if (!hostHeader || hostHeader.length > 300) return undefined;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9._-]+))(?::(\d{1,5}))?$/.exec(hostHeader);
  if (!m) return undefined;
  return (m[1] ?? m[2] ?? "").toLowerCase().replace(/\.$/, "");
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
  const auth = new TokenAuth(opts.token);
  const operators = new OperatorTokens(opts.operators ?? []);
  const sessions = new Sessions();
  const exposed = auth.configured && !isLoopbackAddress(opts.host) && opts.host !== "localhost";
  const allowedHosts = new Set([...LOOPBACK_NAMES, opts.host, ...(opts.allowedHosts ?? [])].map((h) => h.toLowerCase().replace(/^\[(.*)\]$/, "$1")));
  const open = (path: string) => path === "/healthz" || path === "/login" || path === "/favicon.ico" || (!opts.protectMetrics && path === "/metrics");

  const guard = (req: Request, res: Response, next: NextFunction): void => {
    if (!exposed) {
      const name = hostNameOf(req.get("host"));
      if (!name || !allowedHosts.has(name)) {
        return sendError(res, 403, "HOST_NOT_ALLOWED", `Host ${JSON.stringify(String(req.get("host") ?? "").slice(0, 100))} is not served here; use 127.0.0.1 or localhost, or list the name in FARM_API_ALLOWED_HOSTS`);
      }
    }
    if (!isSafeMethod(req.method)) {
      const foreign = foreignOrigin(req, allowedHosts);
      if (foreign) return sendError(res, 403, "FOREIGN_ORIGIN", `${foreign} may not change state here`);
    }
    if (open(req.path)) return next();
    let principal: Principal = { role: "admin" };
    if (auth.configured && !auth.headerOk(req)) {
      const session = sessions.lookup(req);
      const operator = session ? session.operator : operators.fromHeader(req);
      if (!session && !operator) {
        if (wantsHtml(req)) return res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl.slice(0, 1000))}`);
        return sendError(res, 401, "UNAUTHORIZED", "an API token is configured, so every request needs it: send Authorization: Bearer <FARM_API_TOKEN> (browsers: log in at /login)");
      }
      if (operator) principal = { role: "operator", operator };
    }
    // The operator role drives human episodes and nothing more: no campaigns, queue, fleet, viewer or tokens.
    if (principal.role === "operator" && !isOperatorPath(req.path)) {
      return sendError(res, 403, "ROLE_FORBIDDEN", "the operator role may use only the operator page (/operate) and /api/operator/*");
    }
    res.locals.principal = principal;
    if (!auth.configured && !isSafeMethod(req.method) && !isLoopbackAddress(req.socket.remoteAddress)) {
      return sendError(res, 403, "FORBIDDEN", "no API token is configured, so state changes are accepted from loopback only");
    }
    next();
  };

  return { guard, loginRoutes: () => loginRoutes(auth, sessions, operators), exposed };
}

const wantsHtml = (req: Request) => req.method === "GET" && /text\/html/.test(req.get("accept") ?? "");
