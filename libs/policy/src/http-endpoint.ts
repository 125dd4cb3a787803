/**
 * One remote policy endpoint: bounded JSON POSTs to a URL with the allow-list, a deadline, the caller's
 * signal and close(); failures become PolicyErrors with a stable code and a message naming the URL.
 * Shared by the single-device HTTP policy (http-policy.ts) and the host-level batcher (http-batcher.ts).
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
import { foreignBody, protocolError, quotedProtocolError, withoutValues, type ForeignBody, type ForeignBodyListener } from "./foreign-body.ts";
import { hostAllowList, redactUrl, UrlNotAllowedError, type HostAllowList } from "./url-guard.ts";

export { snippet } from "./foreign-body.ts";

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

export const POLICY_VERSION_HEADER = "x-policy-version";
/** A server that answers with `X-Policy-Protocol: 2` also receives episode-end messages (PROTOCOL.md). */
export const POLICY_PROTOCOL_HEADER = "x-policy-protocol";

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
   * POSTs `body` and hands the parsed JSON to `parse`; what `parse` throws becomes a bad_response
   * `<where>: <invalid>: <its message>`. `invalid` names what the answer failed to be.
   */
  request<T>(body: string, parse: (json: unknown) => T, invalid: string, signal?: AbortSignal): Promise<T>;
  close(): void;
}

type StopReason = "timeout" | "caller" | "close";

/** A Retry-After header (delay in seconds, or an HTTP date) in ms; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, nowMs = Date.now()): number | undefined {
  const v = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!v) return undefined;
  if (/^\d{1,9}$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
}

/** How long an idle kept-alive connection to a policy server stays open. */
const KEEP_ALIVE_IDLE_MS = 2000;

export function httpEndpoint(url: string, opts: HttpEndpointOptions & { maxResponseBytes: number }): HttpEndpoint {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PolicyError("bad_spec", `remote policy: ${JSON.stringify(url.slice(0, 100))} is not a URL; use e.g. http://127.0.0.1:8000/act`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new PolicyError("bad_spec", `remote policy: ${redactUrl(url)} must be an http:// or https:// URL`);
  }
  const where = `remote policy ${redactUrl(url)}`;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= 2 ** 31 - 1)) throw new PolicyError("bad_spec", `${where}: timeoutMs must be a positive number of ms up to 2^31-1, got ${timeoutMs}`);
  const maxBytes = opts.maxResponseBytes;
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

  let version = "unknown";
  let serverProtocol = 1;
  let closed = false;
  // Requests in flight, aborted by close(). One controller per request, with listeners removed
  // afterwards, rather than AbortSignal.any over long-lived signals (which grows their listener lists).
  const inFlight = new Set<() => void>();
  // One kept-alive connection pool per endpoint (a connection per step costs a handshake each time); idle
  // connections close after KEEP_ALIVE_IDLE_MS, before common servers' own idle limits (5 s), and a request on one the
  // server closed anyway is sent once more on a fresh connection (StaleConnectionError). That close is almost always the
  // server's idle timeout, before the request reached it; a server that took the request and then dropped the
  // connection without answering sees that step twice.
  const agent = new (parsed.protocol === "https:" ? https.Agent : http.Agent)({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS });

  // Why the request stopped decides the error code, whatever error the transport reports.
  const classify = (e: unknown, stoppedBy: StopReason | undefined, during: string): PolicyError => {
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
  };

  const shownUrl = redactUrl(url);
  /** Reports a body kept out of job data; a listener's failure must not change the policy's error. */
  const foreign = (res: ExchangeResult, kind: ForeignBody["kind"], detail?: string): string => {
    const bytes = res.tooLarge ? res.size : Buffer.byteLength(res.text);
    try {
      opts.onForeignBody?.(foreignBody(shownUrl, res.status, kind, res.text, bytes, detail));
    } catch {
      /* metrics and logs only */
    }
    return bytes === 0 ? "empty body" : `a body of ${bytes} bytes, not shown: only the policy protocol's {"error": "…"} is`;
  };

  function failedStatus(res: ExchangeResult): PolicyError {
    const retryable = res.status >= 500 || res.status === 408 || res.status === 429;
    const own = res.tooLarge ? undefined : protocolError(res.text);
    const said = own !== undefined ? `: ${quotedProtocolError(own)}` : res.text.length > 0 ? ` (${foreign(res, "http_status")})` : "";
    const hint = retryable ? "check the model server's logs" : res.status >= 300 && res.status < 400 ? "redirects are not followed; use the final URL" : "check the URL and the request format";
    const err = new PolicyError("http_status", `${where}: server answered HTTP ${res.status}${said}; ${hint}`, { retryable });
    err.httpStatus = res.status;
    const after = retryAfterMs(res.headers["retry-after"]);
    if (after !== undefined) err.retryAfterMs = after;
    return err;
  }

  function answer<T>(res: ExchangeResult, parse: (json: unknown) => T, invalid: string): T {
    const v = res.headers[POLICY_VERSION_HEADER];
    if (typeof v === "string" && v) version = v.slice(0, 128);
    const proto = Number(res.headers[POLICY_PROTOCOL_HEADER]);
    if (Number.isSafeInteger(proto) && proto > serverProtocol) serverProtocol = proto;
    const text = res.text;
    if (res.status < 200 || res.status > 299) throw failedStatus(res);
    if (res.tooLarge) throw new PolicyError("bad_response", `${where}: answer of ${res.size}+ bytes exceeds ${maxBytes}; answer with one action object`);
    if (res.status === 204) return parse(undefined);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new PolicyError("bad_response", `${where}: answer is not JSON (${foreign(res, "not_json")}); answer with {"actionType":"TOUCH","touchPosition":[x,y]}`);
    }
    try {
      return parse(body);
    } catch (e) {
      if (e instanceof PolicyError) throw e;
      // The rule broken, not the values that broke it: those are the answer's, and go to the local log only.
      const message = coerceError(e).message;
      foreign(res, "not_an_answer", message);
      throw new PolicyError("bad_response", `${where}: ${invalid}: ${withoutValues(message)}`, { cause: e });
    }
  }

  async function request<T>(body: string, parse: (json: unknown) => T, invalid: string, signal?: AbortSignal): Promise<T> {
    if (closed) throw new PolicyError("closed", `${where}: act() after close()`);
    const ctl = new AbortController();
    let stoppedBy: StopReason | undefined;
    const stop = (why: StopReason) => {
      stoppedBy ??= why;
      ctl.abort();
    };
    const timer = setTimeout(() => stop("timeout"), timeoutMs);
    const onCallerAbort = () => stop("caller");
    if (signal?.aborted) stop("caller");
    signal?.addEventListener("abort", onCallerAbort, { once: true });
    const stopForClose = () => stop("close");
    inFlight.add(stopForClose);
    let ok = true;
    try {
      let res: ExchangeResult;
      try {
        const exchange: ExchangeOptions = {
          headers: { "content-type": "application/json", accept: "application/json", ...opts.headers },
          signal: ctl.signal,
          maxBytes,
          lookup: allow.lookup,
          agent,
        };
        res = await postJson(parsed, body, exchange).catch((e: unknown) => {
          if (e instanceof StaleConnectionError && !ctl.signal.aborted) return postJson(parsed, body, exchange);
          throw e;
        });
      } catch (e) {
        throw classify(e, stoppedBy, e instanceof BodyReadError ? "while reading the answer body" : "before the server answered");
      }
      return answer(res, parse, invalid);
    } catch (e) {
      ok = false;
      throw e;
    } finally {
      opts.onExchange?.(ok);
      clearTimeout(timer);
      signal?.removeEventListener("abort", onCallerAbort);
      inFlight.delete(stopForClose);
    }
  }

  return {
    where,
    url: parsed,
    get version() {
      return version;
    },
    get serverProtocol() {
      return serverProtocol;
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
