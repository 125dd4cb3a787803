/**
 * The remote policy: for models served elsewhere. Each act() POSTs the observation as JSON
 * (wire.ts) to the URL and expects `{"actionType": "TOUCH"|"LIFT"|"REPEAT", "touchPosition": [x, y]}`.
 *
 * Failures are PolicyErrors with a stable code and a message naming the URL and what to fix:
 *   timeout (retryable)      no complete answer within `timeoutMs`
 *   unreachable (retryable)  connection refused / reset / DNS failure
 *   http_status              non-2xx; retryable for 408, 429 and 5xx
 *   bad_response             2xx but not JSON, too large, or not a valid action
 *   url_not_allowed          the host (or an address it resolves to) is not in the allow-list (url-guard.ts)
 *   aborted                  the caller's signal fired
 * Messages quote at most a short, sanitised excerpt of a remote body, and the URL without credentials.
 * The version is the server's `X-Policy-Version` header (latest seen), else "unknown".
 */
import { parseAction } from "./action.ts";
import { PolicyError } from "./errors.ts";
import { BodyReadError, postJson, type ExchangeResult } from "./http-exchange.ts";
import { hostAllowList, hostAllowListFromEnv, redactUrl, UrlNotAllowedError, type HostAllowList } from "./url-guard.ts";
import type { Action, EpisodeContext, Observation, Policy } from "./types.ts";
import { stringifyWire, toWireRequest, type PixelEncoding } from "./wire.ts";
import { coerceError } from "@farm/errors";

export interface HttpPolicyOptions {
  /** Deadline for one act(): request, server time and response body. Default 10 000 ms. */
  timeoutMs?: number;
  /** Whether to ask the runner for pixels. Default true (a remote model usually looks at the screen). */
  needsPixels?: boolean;
  /** How pixels travel: "png" (default, smaller) or "rgb" (raw bytes, no encoding cost). */
  pixelEncoding?: PixelEncoding;
  /** Extra request headers, e.g. an authorization header for the model server. */
  headers?: Record<string, string>;
  /** Larger answers are a bad_response (a policy answer is tiny). Default 65 536 bytes. */
  maxResponseBytes?: number;
  /**
   * Hosts the policy may reach besides loopback (url-guard.ts syntax). Default: FARM_POLICY_ALLOWED_HOSTS.
   * Link-local and cloud metadata addresses need an explicit entry.
   */
  allowedHosts?: readonly string[];
}

export const POLICY_VERSION_HEADER = "x-policy-version";

/** A short, printable excerpt of a remote body for messages (which end up in job failure reasons). */
export function snippet(text: string): string {
  const s = text
    .slice(0, 400)
    .replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

export function httpPolicy(url: string, opts: HttpPolicyOptions = {}): Policy {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PolicyError("bad_spec", `remote policy: ${JSON.stringify(url.slice(0, 100))} is not a URL; use e.g. http://127.0.0.1:8000/act`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new PolicyError("bad_spec", `remote policy: ${redactUrl(url)} must be an http:// or https:// URL`);
  }
  const shown = redactUrl(url);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= 2 ** 31 - 1)) throw new PolicyError("bad_spec", `remote policy ${shown}: timeoutMs must be a positive number of ms up to 2^31-1, got ${timeoutMs}`);
  const maxResponseBytes = opts.maxResponseBytes ?? 65_536;
  const encoding = opts.pixelEncoding ?? "png";
  const where = `remote policy ${shown}`;
  let allow: HostAllowList;
  try {
    allow = opts.allowedHosts ? hostAllowList(opts.allowedHosts) : hostAllowListFromEnv();
  } catch (e) {
    throw new PolicyError("bad_spec", `${where}: ${coerceError(e).message}`);
  }
  try {
    allow.checkHost(parsed.hostname);
  } catch (e) {
    throw new PolicyError("url_not_allowed", `${where}: ${coerceError(e).message}`);
  }

  let context: EpisodeContext | null = null;
  let version = "unknown";
  let closed = false;
  // Requests in flight, aborted by close(). One controller per request, with listeners removed
  // afterwards, rather than AbortSignal.any over long-lived signals (which grows their listener lists).
  const inFlight = new Set<() => void>();

  async function post(observation: Observation, signal?: AbortSignal): Promise<Action> {
    if (closed) throw new PolicyError("closed", `${where}: act() after close()`);
    const ctl = new AbortController();
    let stoppedBy: "timeout" | "caller" | "close" | undefined;
    const stop = (why: "timeout" | "caller" | "close") => {
      stoppedBy ??= why;
      ctl.abort();
    };
    const timer = setTimeout(() => stop("timeout"), timeoutMs);
    const onCallerAbort = () => stop("caller");
    if (signal?.aborted) stop("caller");
    signal?.addEventListener("abort", onCallerAbort, { once: true });
    const stopForClose = () => stop("close");
    inFlight.add(stopForClose);
    try {
      return await exchange(observation, ctl.signal, () => stoppedBy);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onCallerAbort);
      inFlight.delete(stopForClose);
    }
  }

  async function exchange(observation: Observation, signal: AbortSignal, stoppedBy: () => "timeout" | "caller" | "close" | undefined): Promise<Action> {
    // Why the request stopped decides the error code, whatever error fetch reports.
    const classify = (e: unknown, during: string): PolicyError => {
      if (e instanceof UrlNotAllowedError) return new PolicyError("url_not_allowed", `${where}: ${e.message}`);
      switch (stoppedBy()) {
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

    let res: ExchangeResult;
    try {
      res = await postJson(parsed, stringifyWire(toWireRequest(observation, context, encoding)), {
        headers: { "content-type": "application/json", accept: "application/json", ...opts.headers },
        signal,
        maxBytes: maxResponseBytes,
        lookup: allow.lookup,
      });
    } catch (e) {
      throw classify(e, e instanceof BodyReadError ? "while reading the answer body" : "before the server answered");
    }
    const text = res.text;
    const v = res.headers[POLICY_VERSION_HEADER];
    if (typeof v === "string" && v) version = v.slice(0, 128);

    if (res.status < 200 || res.status > 299) {
      const retryable = res.status >= 500 || res.status === 408 || res.status === 429;
      const excerpt = snippet(text);
      throw new PolicyError("http_status", `${where}: server answered HTTP ${res.status}${excerpt ? ` (${excerpt})` : ""}; ${retryable ? "check the model server's logs" : res.status >= 300 && res.status < 400 ? "redirects are not followed; use the final URL" : "check the URL and the request format"}`, { retryable });
    }
    if (res.tooLarge) {
      throw new PolicyError("bad_response", `${where}: answer of ${res.size}+ bytes exceeds ${maxResponseBytes}; answer with one action object`);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new PolicyError("bad_response", `${where}: answer is not JSON (${snippet(text) || "empty body"}); answer with {"actionType":"TOUCH","touchPosition":[x,y]}`);
    }
    try {
      return parseAction(body);
    } catch (e) {
      throw new PolicyError("bad_response", `${where}: answer is not a valid action: ${coerceError(e).message}`, { cause: e });
    }
  }

  return {
    name: `http:${parsed.host}${parsed.pathname}`,
    get version() {
      return version;
    },
    needsPixels: opts.needsPixels ?? true,
    async reset(ctx) {
      context = { ...ctx, screen: { ...ctx.screen } };
    },
    act: post,
    async close() {
      closed = true;
      for (const stopRequest of inFlight) stopRequest();
    },
  };
}
