/**
 * One bounded HTTP POST for the remote policy, on node:http(s) rather than fetch so that:
 *   - every connection goes through the allow-list's `lookup` (addresses checked when connecting, so a
 *     name cannot be re-pointed at a metadata address between check and use);
 *   - redirects are never followed (a redirect could lead anywhere);
 *   - the body is read up to `maxBytes` and the connection dropped beyond it (a huge answer costs
 *     nothing), and a declared content-length over the limit is refused before reading.
 * The caller's signal ends it at any point (deadline, abort, close).
 */
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { FarmError } from "@farm/errors";
import { readBoundedAnswer } from "@farm/outbound-http";

export interface ExchangeResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body, or its first `maxBytes` bytes when `tooLarge`. */
  text: string;
  /** The body (or its declared length) exceeded `maxBytes`; reading stopped there. */
  tooLarge: boolean;
  /** Declared or read size when too large. */
  size: number;
}

export interface ExchangeOptions {
  headers: Record<string, string>;
  /** A keep-alive agent (one per endpoint), or none: a connection per request. */
  agent?: http.Agent;
  signal: AbortSignal;
  maxBytes: number;
  lookup: LookupFunction;
}

/** Marks a failure while reading the body (as opposed to before any answer). */
export class BodyReadError extends FarmError<"body_read"> {
  override readonly name = "BodyReadError";
  /** a later try can succeed (transient): retryable. */
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super("body_read", message, { ...opts, retryable: true });
  }
}

/** The request went out on a kept-alive connection the server closed before answering (almost always its idle timeout). */
export class StaleConnectionError extends FarmError<"stale_connection"> {
  override readonly name = "StaleConnectionError";
  constructor(cause: Error) {
    super("stale_connection", `kept-alive connection closed by the server: ${cause.message}`, { cause, retryable: true });
  }
}

export function postJson(url: URL, body: string, opts: ExchangeOptions): Promise<ExchangeResult> {
  const mod = url.protocol === "https:" ? https : http;
  return new Promise((resolveOnce, rejectOnce) => {
    let answered = false;
    let settled = false;
    // destroy() below emits errors synchronously: the first outcome wins.
    const resolve = (r: ExchangeResult) => {
      if (settled) return;
      settled = true;
      resolveOnce(r);
    };
    const reject = (e: unknown) => {
      if (settled) return;
      settled = true;
      rejectOnce(e);
    };
    const req = mod.request(
      url,
      {
        method: "POST",
        headers: { ...opts.headers, "content-length": String(Buffer.byteLength(body)) },
        signal: opts.signal,
        lookup: opts.lookup,
        agent: opts.agent ?? false,
        maxHeaderSize: 16 * 1024,
      },
      (res) => {
        answered = true;
        readBoundedAnswer(res, opts.maxBytes, resolve, (e) => reject(new BodyReadError(e.message, { cause: e })));
      },
    );
    req.on("error", (e: NodeJS.ErrnoException) => {
      // A reused connection that fails before any answer was closed by the server (its idle timeout, as a rule).
      if (!answered && req.reusedSocket && (e.code === "ECONNRESET" || e.code === "EPIPE")) return reject(new StaleConnectionError(e));
      reject(answered ? new BodyReadError(e.message, { cause: e }) : e);
    });
    req.end(body);
  });
}
