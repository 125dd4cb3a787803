/**
 * The login page: GET/POST /login takes the API token once and sets the session cookie (a browser cannot send
 * a bearer header to the fleet page or the queue UI); POST /logout ends the session.
 */
import express, { type Router } from "express";
import type { OperatorTokens, TokenAuth } from "./http-auth.ts";
import { SESSION_COOKIE, SESSION_TTL_MS, type Sessions } from "./http-sessions.ts";

export function loginRoutes(auth: TokenAuth, sessions: Sessions, operators?: OperatorTokens): Router {
  const r = express.Router();
  r.get("/login", (req, res) => {
    res.type("html").set("cache-control", "no-store").send(page(auth.configured ? "Enter the scheduler's API token (FARM_API_TOKEN)." : "No API token is configured; nothing to log in to.", safeNext(req.query.next)));
  });
  r.post("/login", express.urlencoded({ extended: false, limit: "8kb", parameterLimit: 10 }), (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const next = safeNext(body.next);
    const admin = auth.configured && typeof body.token === "string" && auth.matches(body.token);
    // An operator's token opens an operator's session: the operator page and its API only.
    const operator = !admin && auth.configured && typeof body.token === "string" ? operators?.nameOf(body.token) : undefined;
    if (!admin && !operator) {
      res.status(401).type("html").send(page("Wrong token.", next));
      return;
    }
    res.cookie(SESSION_COOKIE, sessions.open(operator), { httpOnly: true, sameSite: "strict", secure: req.secure, path: "/", maxAge: SESSION_TTL_MS });
    res.redirect(303, operator && !isOperatorPath(next.split("?")[0]!) ? "/operate" : next);
  });
  r.post("/logout", (req, res) => {
    sessions.end(req);
    res.clearCookie(SESSION_COOKIE, { path: "/" });
    res.redirect(303, "/login");
  });
  return r;
}

function page(message: string, next: string): string {
  return (
    `<!doctype html><html><head><meta charset="utf-8"><title>farm scheduler: log in</title></head><body>` +
    `<h1>Android episode farm</h1><p>${message}</p><form method="post" action="/login">` +
    `<input type="hidden" name="next" value="${escapeHtml(next)}">` +
    `<label>API token <input type="password" name="token" autocomplete="current-password" autofocus></label> ` +
    `<button type="submit">Log in</button></form></body></html>`
  );
}

/** What the operator role may reach: its page, its API, the shared assets, log-out. */
export function isOperatorPath(path: string): boolean {
  return path === "/operate" || path.startsWith("/api/operator/") || path.startsWith("/web/") || path === "/logout" || path === "/favicon.ico";
}

/** Only local paths: never `//evil.example` or `https://…` (open redirect). */
function safeNext(v: unknown): string {
  return typeof v === "string" && /^\/(?![/\\])[!-~]{0,1000}$/.test(v) ? v : "/";
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
