/**
 * The remote policy: for models served elsewhere. Each act() POSTs the observation as JSON
 * (wire.ts) to the URL and expects `{"actionType": "TOUCH"|"LIFT"|"REPEAT", "touchPosition": [x, y]}`.
 *
 * Failures are PolicyErrors with a stable code and a message naming the URL and what to fix:
 *   timeout (retryable)      no complete answer within `timeoutMs`
 *   unreachable (retryable)  connection refused / reset / DNS failure
 *   http_status              non-2xx; retryable for 408, 429 and 5xx
 *   bad_response             2xx but not JSON, or not a valid action
 *   aborted                  the caller's signal fired
 * The version is the server's `X-Policy-Version` header (latest seen), else "unknown".
 */
import { parseAction } from "./action.ts";
import { PolicyError } from "./errors.ts";
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
}

export const POLICY_VERSION_HEADER = "x-policy-version";

function snippet(text: string): string {
  const s = text.replace(/\s+/g, " ").trim();
  return s.length > 200 ? `${s.slice(0, 197)}...` : s;
}

export function httpPolicy(url: string, opts: HttpPolicyOptions = {}): Policy {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PolicyError("bad_spec", `remote policy: ${JSON.stringify(url)} is not a URL; use e.g. http://127.0.0.1:8000/act`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new PolicyError("bad_spec", `remote policy: ${url} must be an http:// or https:// URL`);
  }
  const timeoutMs = opts.timeoutMs ?? 10_000;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new PolicyError("bad_spec", `remote policy ${url}: timeoutMs must be a positive number, got ${timeoutMs}`);
  const maxResponseBytes = opts.maxResponseBytes ?? 65_536;
  const encoding = opts.pixelEncoding ?? "png";
  const where = `remote policy ${url}`;

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
      switch (stoppedBy()) {
        case "caller":
          return new PolicyError("aborted", `${where}: aborted by the caller ${during}`, { cause: e });
        case "close":
          return new PolicyError("closed", `${where}: policy closed ${during}`, { cause: e });
        case "timeout":
          return new PolicyError("timeout", `${where}: no answer within ${timeoutMs} ms ${during}; make the server faster or raise the policy timeout`, { retryable: true, cause: e });
        case undefined: {
          const code = (e as { cause?: { code?: string } }).cause?.code;
          return new PolicyError("unreachable", `${where}: cannot reach the server (${code ?? coerceError(e).message}) ${during}; check that it is running and the URL is right`, { retryable: true, cause: e });
        }
      }
    };

    let res: Response;
    try {
      res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", ...opts.headers },
        body: stringifyWire(toWireRequest(observation, context, encoding)),
        signal,
      });
    } catch (e) {
      throw classify(e, "before the server answered");
    }
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      throw classify(e, "while reading the answer body");
    }
    const v = res.headers.get(POLICY_VERSION_HEADER);
    if (v) version = v;

    if (!res.ok) {
      const retryable = res.status >= 500 || res.status === 408 || res.status === 429;
      throw new PolicyError("http_status", `${where}: server answered HTTP ${res.status}${text ? ` (${snippet(text)})` : ""}; ${retryable ? "check the model server's logs" : "check the URL and the request format"}`, { retryable });
    }
    if (Buffer.byteLength(text) > maxResponseBytes) {
      throw new PolicyError("bad_response", `${where}: answer of ${Buffer.byteLength(text)} bytes exceeds ${maxResponseBytes}; answer with one action object`);
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
