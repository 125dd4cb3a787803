/**
 * The API token as a request may carry it (http-access.ts decides where it is needed): `Authorization:
 * Bearer <token>`, or HTTP basic auth with the token as the password (any user name, for tools that only
 * speak basic auth). Compared by digest in constant time.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Request } from "express";

export function digest(s: string): Buffer {
  return createHash("sha256").update(s).digest();
}

/** The operator role's tokens (FARM_OPERATOR_TOKENS): a token → the operator's name, compared by digest in constant time. */
export class OperatorTokens {
  private readonly entries: { name: string; digest: Buffer }[];
  constructor(operators: readonly { name: string; token: string }[]) {
    this.entries = operators.map((o) => ({ name: o.name, digest: digest(o.token) }));
  }

  get configured(): boolean {
    return this.entries.length > 0;
  }

  /** The operator the token belongs to (every entry is compared, so the time does not tell which). */
  nameOf(given: string): string | undefined {
    const d = digest(given);
    let found: string | undefined;
    for (const e of this.entries) if (timingSafeEqual(d, e.digest)) found ??= e.name;
    return found;
  }

  /** The operator whose token the request's Authorization header carries (bearer or basic). */
  fromHeader(req: Request): string | undefined {
    const h = req.get("authorization") ?? "";
    const bearer = /^Bearer ([!-~]{1,4096})$/.exec(h);
    if (bearer?.[1]) return this.nameOf(bearer[1]);
    const basic = /^Basic ([A-Za-z0-9+/=]{1,6000})$/.exec(h);
    if (!basic?.[1]) return undefined;
    const decoded = Buffer.from(basic[1], "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    return colon >= 0 ? this.nameOf(decoded.slice(colon + 1)) : undefined;
  }
}

export class TokenAuth {
  constructor(private readonly token: string | undefined) {}

  /** Whether a token is configured at all. */
  get configured(): boolean {
    return !!this.token;
  }

  matches(given: string): boolean {
    return !!this.token && timingSafeEqual(digest(given), digest(this.token));
  }

  /** The request's Authorization header carries the token (bearer or basic). */
  headerOk(req: Request): boolean {
    return this.bearerOk(req) || this.basicOk(req);
  }

  private bearerOk(req: Request): boolean {
    const m = /^Bearer ([!-~]{1,4096})$/.exec(req.get("authorization") ?? "");
    return !!m?.[1] && this.matches(m[1]);
  }

  private basicOk(req: Request): boolean {
    const m = /^Basic ([A-Za-z0-9+/=]{1,6000})$/.exec(req.get("authorization") ?? "");
    if (!m?.[1]) return false;
    const decoded = Buffer.from(m[1], "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    return colon >= 0 && this.matches(decoded.slice(colon + 1));
  }
}
