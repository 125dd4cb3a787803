/**
 * One remote policy endpoint: bounded JSON POSTs to a URL with the allow-list, a deadline, the caller's
 * signal and close(); failures become PolicyErrors with a stable code and a message naming the URL.
 * Shared by the single-device HTTP policy (http-policy.ts), the host-level batcher (http-batcher.ts) and the llm
 * policy's chat client. Its pieces: the target (URL and allow-list, `endpointTarget`), one exchange under a deadline,
 * the caller's signal and close() (`exchangeOnce`), why a transport failed (`transportError`), and reading the
 * answer (http-answer.ts).
 *
 *   timeout (retryable)      no complete answer within `timeoutMs`
 *   unreachable (retryable)  connection refused / reset / DNS failure
 *   http_status              non-2xx; retryable for 408, 429 and 5xx
 *   bad_response             2xx but not JSON, too large, or not what `parse` accepts
 *   url_not_allowed          the host (or an address it resolves to) is not in the allow-list (url-guard.ts)
 *   aborted / closed         the caller's signal fired / close() was called
 */
import { coerceError } from "@farm/errors";
import { PolicyError } from "./errors.ts";
import http from "node:http";
import https from "node:https";
import { BodyReadError, postJson, StaleConnectionError, type ExchangeOptions, type ExchangeResult } from "./http-exchange.ts";
import { noteServerHeaders, readAnswer, type AnswerMeta, type AnswerSource, type ServerFacts } from "./http-answer.ts";
import type { ForeignBodyListener } from "./foreign-body.ts";
import { hostAllowList, redactUrl, UrlNotAllowedError, type HostAllowList } from "./url-guard.ts";

export { snippet } from "./foreign-body.ts";
export { POLICY_PROTOCOL_HEADER, POLICY_VERSION_HEADER, retryAfterMs } from "./http-answer.ts";

export interface HttpEndpointOptions {
  /** Deadline for one exchange: request, server time and response body. Default 10 000 ms. */
  timeoutMs?: number;
  /** Extra request headers, e.g. an authorization header for the model server. */
  headers?: Record<string, string>;
  /** Larger answers are a bad_response. */
  maxResponseBytes?: number;
  /** Hosts besides loopback (url-guard.ts syntax). Default: FARM_POLICY_ALLOWED_HOSTS. */
  allowedHosts?: readonly string[];
  /** Told after every exchange whether it succeeded (for metrics: farm_policy_requests_total). */
  onExchange?: (ok: boolean) => void;
  /** Told of every answer body kept out of job data (foreign-body.ts): for the worker's metric and local log. */
  onForeignBody?: ForeignBodyListener;
}

export interface HttpEndpoint {
  /** `remote policy <url without credentials>`, the prefix of every message. */
  readonly where: string;
  readonly url: URL;
  /** The server's latest `X-Policy-Version`, else "unknown". */
  readonly version: string;
  /** The highest protocol the server declared with `X-Policy-Protocol` (1 when it never did). */
  readonly serverProtocol: number;
  readonly closed: boolean;
  /**
   * POSTs `body` and hands the parsed JSON to `parse` (with this response's `X-Policy-Version` in `meta`); what `parse`
   * throws becomes a bad_response `<where>: <invalid>: <its message>`. `invalid` names what the answer failed to be.
   */
  request<T>(body: string, parse: (json: unknown, meta: AnswerMeta) => T, invalid: string, signal?: AbortSignal): Promise<T>;
  close(): void;
}

type StopReason = "timeout" | "caller" | "close";

/** How long an idle kept-alive connection to a policy server stays open. */
const KEEP_ALIVE_IDLE_MS = 2000;

/** Where requests go: the checked URL, its message prefix, the deadline and the allow-list that vets its addresses. */
export interface EndpointTarget {
  url: URL;
  /** `remote policy <url without credentials>`. */
  where: string;
  shownUrl: string;
  timeoutMs: number;
  allow: HostAllowList;
}

/** Checks `url` (http or https, a host the allow-list admits) and the deadline; a bad_spec / url_not_allowed PolicyError otherwise. */
export function endpointTarget(url: string, opts: Pick<HttpEndpointOptions, "timeoutMs" | "allowedHosts">): EndpointTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PolicyError("bad_spec", `remote policy: ${JSON.stringify(url.slice(0, 100))} is not a URL; use e.g. http://127.0.0.1:8000/act`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new PolicyError("bad_spec", `remote policy: ${redactUrl(url)} must be an http:// or https:// URL`);
  }
  const shownUrl = redactUrl(url);
  const where = `remote policy ${shownUrl}`;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= 2 ** 31 - 1)) throw new PolicyError("bad_spec", `${where}: timeoutMs must be a positive number of ms up to 2^31-1, got ${timeoutMs}`);
  let allow: HostAllowList;
  try {
    // Loopback only unless the caller passes its configured list (FARM_POLICY_ALLOWED_HOSTS in the services' config).
    allow = hostAllowList(opts.allowedHosts ?? []);
  } catch (e) {
    throw new PolicyError("bad_spec", `${where}: ${coerceError(e).message}`);
  }
  try {
    allow.checkHost(parsed.hostname);
  } catch (e) {
    throw new PolicyError("url_not_allowed", `${where}: ${coerceError(e).message}`);
  }
  return { url: parsed, where, shownUrl, timeoutMs, allow };
}

/** A failed exchange as a PolicyError: why the request stopped decides the code, whatever error the transport reports. */
export function transportError(target: Pick<EndpointTarget, "where" | "timeoutMs">, e: unknown, stoppedBy: StopReason | undefined, during: string): PolicyError {
  const { where, timeoutMs } = target;
  if (e instanceof UrlNotAllowedError) return new PolicyError("url_not_allowed", `${where}: ${e.message}`);
  switch (stoppedBy) {
    case "caller":
      return new PolicyError("aborted", `${where}: aborted by the caller ${during}`, { cause: e });
    case "close":
      return new PolicyError("closed", `${where}: policy closed ${during}`, { cause: e });
    case "timeout":
      return new PolicyError("timeout", `${where}: no answer within ${timeoutMs} ms ${during}; make the server faster or raise the policy timeout`, { retryable: true, cause: e });
    case undefined: {
      const code = (e as { code?: string }).code ?? (e as { cause?: { code?: string } }).cause?.code;
      return new PolicyError("unreachable", `${where}: cannot reach the server (${code ?? coerceError(e).message}) ${during}; check that it is running and the URL is right`, { retryable: true, cause: e });
    }
  }
}

/**
 * One POST of `body` to the target, stopped by its deadline, the caller's `signal` or `stopOnClose` (registered
 * while it runs); a request on a kept-alive connection the server had closed is sent once more on a fresh one.
 */
export async function exchangeOnce(
  target: EndpointTarget,
  body: string,
  o: { headers: Record<string, string> | undefined; maxBytes: number; agent: http.Agent; signal: AbortSignal | undefined; inFlight: Set<() => void> },
): Promise<ExchangeResult> {
  const ctl = new AbortController();
  let stoppedBy: StopReason | undefined;
  const stop = (why: StopReason) => {
    stoppedBy ??= why;
    ctl.abort();
  };
  const timer = setTimeout(() => stop("timeout"), target.timeoutMs);
  const onCallerAbort = () => stop("caller");
  if (o.signal?.aborted) stop("caller");
  o.signal?.addEventListener("abort", onCallerAbort, { once: true });
  const stopForClose = () => stop("close");
  o.inFlight.add(stopForClose);
  try {
    const exchange: ExchangeOptions = {
      headers: { "content-type": "application/json", accept: "application/json", ...o.headers },
      signal: ctl.signal,
      maxBytes: o.maxBytes,
      lookup: target.allow.lookup,
      agent: o.agent,
    };
    return await postJson(target.url, body, exchange).catch((e: unknown) => {
      if (e instanceof StaleConnectionError && !ctl.signal.aborted) return postJson(target.url, body, exchange);
      throw e;
    });
  } catch (e) {
    throw transportError(target, e, stoppedBy, e instanceof BodyReadError ? "while reading the answer body" : "before the server answered");
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener("abort", onCallerAbort);
    o.inFlight.delete(stopForClose);
  }
}

export function httpEndpoint(url: string, opts: HttpEndpointOptions & { maxResponseBytes: number }): HttpEndpoint {
  const target = endpointTarget(url, opts);
  const source: AnswerSource = { where: target.where, shownUrl: target.shownUrl, maxBytes: opts.maxResponseBytes, onForeignBody: opts.onForeignBody };
  const facts: ServerFacts = { version: "unknown", protocol: 1 };
  let closed = false;
  // Requests in flight, aborted by close(). One controller per request, with listeners removed
  // afterwards, rather than AbortSignal.any over long-lived signals (which grows their listener lists).
  const inFlight = new Set<() => void>();
  // One kept-alive connection pool per endpoint (a connection per step costs a handshake each time); idle
  // connections close after KEEP_ALIVE_IDLE_MS, before common servers' own idle limits (5 s), and a request on one the
  // server closed anyway is sent once more on a fresh connection (StaleConnectionError). That close is almost always the
  // server's idle timeout, before the request reached it; a server that took the request and then dropped the
  // connection without answering sees that step twice.
  const agent = new (target.url.protocol === "https:" ? https.Agent : http.Agent)({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS });

  async function request<T>(body: string, parse: (json: unknown, meta: AnswerMeta) => T, invalid: string, signal?: AbortSignal): Promise<T> {
    if (closed) throw new PolicyError("closed", `${target.where}: act() after close()`);
    let ok = false;
    try {
      const res = await exchangeOnce(target, body, { headers: opts.headers, maxBytes: opts.maxResponseBytes, agent, signal, inFlight });
      noteServerHeaders(res, facts);
      const value = readAnswer(source, res, parse, invalid);
      ok = true;
      return value;
    } finally {
      opts.onExchange?.(ok);
    }
  }

  return {
    where: target.where,
    url: target.url,
    get version() {
      return facts.version;
    },
    get serverProtocol() {
      return facts.protocol;
    },
    get closed() {
      return closed;
    },
    request,
    close() {
      closed = true;
      for (const stopRequest of inFlight) stopRequest();
      agent.destroy();
    },
  };
}
