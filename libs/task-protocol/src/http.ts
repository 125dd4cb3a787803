/**
 * One bounded HTTP exchange with a task server, on node:http(s) with a kept-alive agent: every connection goes
 * through the host guard's `lookup`; redirects are never followed; the answer is read up to `maxBytes` and the
 * connection dropped beyond it (a declared content-length over the limit is refused before reading); the caller's
 * signal ends it at any point. Transport trouble is thrown as the Node error; the caller classifies it.
 */
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { readBoundedAnswer } from "@farm/outbound-http";
import { TaskProtocolError } from "./errors.ts";

export interface Exchange {
  status: number;
  /** The body, or its first `maxBytes` bytes when `tooLarge`. */
  text: string;
  tooLarge: boolean;
  /** Bytes read (or declared, when refused by its content-length). */
  size: number;
}

export interface ExchangeOptions {
  agent: http.Agent;
  signal: AbortSignal;
  maxBytes: number;
  lookup: LookupFunction;
}

/** The request went out on a kept-alive connection the server had closed (its idle timeout): nothing of it was answered. */
export class StaleConnectionError extends TaskProtocolError {
  override readonly name = "StaleConnectionError";
  /** sent again once on a fresh connection: retryable. */
  constructor(cause: Error) {
    super("unreachable", `kept-alive connection closed by the server: ${cause.message}`, { cause, retryable: true });
  }
}

export function exchange(method: "POST" | "DELETE", url: URL, body: string | undefined, opts: ExchangeOptions): Promise<Exchange> {
  const mod = url.protocol === "https:" ? https : http;
  return new Promise((resolveOnce, rejectOnce) => {
    let settled = false;
    let answered = false;
    const resolve = (r: Exchange) => {
      if (!settled) {
        settled = true;
        resolveOnce(r);
      }
    };
    const reject = (e: unknown) => {
      if (!settled) {
        settled = true;
        rejectOnce(e);
      }
    };
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(Buffer.byteLength(body));
    }
    const req = mod.request(url, { method, headers, signal: opts.signal, lookup: opts.lookup, agent: opts.agent, maxHeaderSize: 16 * 1024 }, (res) => {
      answered = true;
      readBoundedAnswer(res, opts.maxBytes, ({ status, text, tooLarge, size }) => resolve({ status, text, tooLarge, size }), reject);
    });
    req.on("error", (e: NodeJS.ErrnoException) => {
      if (!answered && req.reusedSocket && (e.code === "ECONNRESET" || e.code === "EPIPE")) return reject(new StaleConnectionError(e));
      reject(e);
    });
    req.end(body);
  });
}
