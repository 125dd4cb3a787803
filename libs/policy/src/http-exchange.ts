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
        const status = res.statusCode ?? 0;
        const declared = Number(res.headers["content-length"] ?? NaN);
        const chunks: Buffer[] = [];
        let size = 0;
        const finish = (tooLarge: boolean) => {
          resolve({ status, headers: res.headers, text: Buffer.concat(chunks).toString("utf8"), tooLarge, size });
        };
        if (Number.isFinite(declared) && declared > opts.maxBytes) {
          size = declared;
          finish(true);
          res.destroy();
          return;
        }
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > opts.maxBytes) {
            chunks.push(c.subarray(0, Math.max(0, opts.maxBytes - (size - c.length))));
            finish(true);
            res.destroy();
            return;
          }
          chunks.push(c);
        });
        res.on("end", () => finish(false));
        res.on("error", (e) => reject(new BodyReadError(e.message, { cause: e })));
        res.on("aborted", () => reject(new BodyReadError("connection closed while reading the answer")));
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
