/**
 * Browser sessions and the cross-site check (http-access.ts mounts both). A session is the cookie the login
 * page sets: a random id, kept here only as its digest with an expiry, at most MAX_SESSIONS (oldest dropped
 * first). The CSRF check refuses a state change whose Origin is another site, whatever credentials it carries.
 */
import { randomBytes } from "node:crypto";
import type { Request } from "express";
import { digest } from "./http-auth.ts";

export const SESSION_COOKIE = "farm_session";
export const SESSION_TTL_MS = 12 * 60 * 60_000;
const MAX_SESSIONS = 1000;

export function cookieValue(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header || header.length > 8192) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export class Sessions {
  /** session id digest (hex) → expiry, and the operator's name for an operator's session (absent: the admin token's). */
  private readonly byDigest = new Map<string, { expires: number; operator?: string }>();

  /** The request's session cookie names a live session. */
  valid(req: Request): boolean {
    return this.lookup(req) !== undefined;
  }

  /** The request's live session: `{}` for the admin token's, `{ operator }` for an operator's. */
  lookup(req: Request): { operator?: string } | undefined {
    const id = cookieValue(req, SESSION_COOKIE);
    if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
    const key = digest(id).toString("hex");
    const s = this.byDigest.get(key);
    if (s === undefined) return undefined;
    if (s.expires < Date.now()) {
      this.byDigest.delete(key);
      return undefined;
    }
    return s.operator ? { operator: s.operator } : {};
  }

  /** A new session (an operator's when named); returns the id for the cookie. */
  open(operator?: string): string {
    const id = randomBytes(32).toString("base64url");
    if (this.byDigest.size >= MAX_SESSIONS) this.byDigest.delete(this.byDigest.keys().next().value!); // oldest first
    this.byDigest.set(digest(id).toString("hex"), { expires: Date.now() + SESSION_TTL_MS, ...(operator ? { operator } : {}) });
    return id;
  }

  /** Ends the request's session, if it has one. */
  end(req: Request): void {
    const id = cookieValue(req, SESSION_COOKIE);
    if (id) this.byDigest.delete(digest(id).toString("hex"));
  }
}

/** Why a state change comes from another site (CSRF), or undefined when it does not. */
export function foreignOrigin(req: Request, allowedHosts: ReadonlySet<string>): string | undefined {
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
}
