/**
 * Reading a policy server's answer (http-endpoint.ts does the exchange): its headers (version, protocol), its
 * status (a non-2xx is an http_status PolicyError, retryable for 408, 429 and 5xx, with Retry-After), its body
 * (bounded, JSON, then what the caller's `parse` accepts). A body that is not an answer stays out of job data: only
 * the policy protocol's `{"error": "…"}` is quoted, the rest goes to `onForeignBody` (foreign-body.ts).
 */
import { coerceError } from "@farm/errors";
import { PolicyError } from "./errors.ts";
import type { ExchangeResult } from "./http-exchange.ts";
import { foreignBody, protocolError, quotedProtocolError, withoutValues, type ForeignBody, type ForeignBodyListener } from "./foreign-body.ts";

export const POLICY_VERSION_HEADER = "x-policy-version";
/** A server that answers with `X-Policy-Protocol: 2` also receives episode-end messages (PROTOCOL.md). */
export const POLICY_PROTOCOL_HEADER = "x-policy-protocol";

/** A Retry-After header (delay in seconds, or an HTTP date) in ms; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, nowMs = Date.now()): number | undefined {
  const v = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!v) return undefined;
  if (/^\d{1,9}$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
}

/** Who answered (the endpoint's message prefix and redacted URL), the body bound and where foreign bodies go. */
export interface AnswerSource {
  where: string;
  shownUrl: string;
  maxBytes: number;
  onForeignBody: ForeignBodyListener | undefined;
}

/** What the server said about itself: the latest `X-Policy-Version` and the highest `X-Policy-Protocol`. */
export interface ServerFacts {
  version: string;
  protocol: number;
}

/** What one response said besides its body: its `X-Policy-Version` (the version that answered), when it sent one. */
export interface AnswerMeta {
  version?: string;
}

/** One response's `X-Policy-Version`, clipped to 128 characters; undefined when absent or empty. */
export function headerVersion(res: ExchangeResult): string | undefined {
  const v = res.headers[POLICY_VERSION_HEADER];
  const s = (Array.isArray(v) ? v[0] : v)?.trim();
  return s ? s.slice(0, 128) : undefined;
}

/** Updates `facts` from an answer's headers. */
export function noteServerHeaders(res: ExchangeResult, facts: ServerFacts): void {
  const v = res.headers[POLICY_VERSION_HEADER];
  if (typeof v === "string" && v) facts.version = v.slice(0, 128);
  const proto = Number(res.headers[POLICY_PROTOCOL_HEADER]);
  if (Number.isSafeInteger(proto) && proto > facts.protocol) facts.protocol = proto;
}

/** Reports a body kept out of job data (a listener's failure must not change the policy's error); how to mention it. */
function foreign(src: AnswerSource, res: ExchangeResult, kind: ForeignBody["kind"], detail?: string): string {
  const bytes = res.tooLarge ? res.size : Buffer.byteLength(res.text);
  try {
    src.onForeignBody?.(foreignBody(src.shownUrl, res.status, kind, res.text, bytes, detail));
  } catch {
    /* metrics and logs only */
  }
  return bytes === 0 ? "empty body" : `a body of ${bytes} bytes, not shown: only the policy protocol's {"error": "…"} is`;
}

/** A non-2xx answer as an http_status PolicyError. */
function failedStatus(src: AnswerSource, res: ExchangeResult): PolicyError {
  const retryable = res.status >= 500 || res.status === 408 || res.status === 429;
  const own = res.tooLarge ? undefined : protocolError(res.text);
  const said = own !== undefined ? `: ${quotedProtocolError(own)}` : res.text.length > 0 ? ` (${foreign(src, res, "http_status")})` : "";
  const hint = retryable ? "check the model server's logs" : res.status >= 300 && res.status < 400 ? "redirects are not followed; use the final URL" : "check the URL and the request format";
  const err = new PolicyError("http_status", `${src.where}: server answered HTTP ${res.status}${said}; ${hint}`, { retryable });
  err.httpStatus = res.status;
  const after = retryAfterMs(res.headers["retry-after"]);
  if (after !== undefined) err.retryAfterMs = after;
  return err;
}

/** The answer `parse` makes of a 2xx JSON body; anything else throws a PolicyError naming what it was. */
export function readAnswer<T>(src: AnswerSource, res: ExchangeResult, parse: (json: unknown, meta: AnswerMeta) => T, invalid: string): T {
  if (res.status < 200 || res.status > 299) throw failedStatus(src, res);
  if (res.tooLarge) throw new PolicyError("bad_response", `${src.where}: answer of ${res.size}+ bytes exceeds ${src.maxBytes}; answer with one action object`);
  const version = headerVersion(res);
  const meta: AnswerMeta = version !== undefined ? { version } : {};
  if (res.status === 204) return parse(undefined, meta);
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    throw new PolicyError("bad_response", `${src.where}: answer is not JSON (${foreign(src, res, "not_json")}); answer with {"actionType":"TOUCH","touchPosition":[x,y]}`);
  }
  try {
    return parse(body, meta);
  } catch (e) {
    if (e instanceof PolicyError) throw e;
    // The rule broken, not the values that broke it: those are the answer's, and go to the local log only.
    const message = coerceError(e).message;
    foreign(src, res, "not_an_answer", message);
    throw new PolicyError("bad_response", `${src.where}: ${invalid}: ${withoutValues(message)}`, { cause: e });
  }
}
