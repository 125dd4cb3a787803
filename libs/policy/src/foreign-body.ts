/**
 * What of a remote answer may travel into job data (failed reasons, trajectories' cause details, heartbeats'
 * last errors: Redis, the API, the queue UI). The submitter of a campaign picks the policy URL and the worker
 * makes the request from inside the network, so an answer's body could carry an internal service's data out.
 * Only the policy protocol's own JSON error (`{"error": "<text>"}`, PROTOCOL.md) is quoted, short and escaped;
 * any other body is described by its size alone, and handed to `onForeignBody` (the worker counts it and logs
 * a bounded excerpt locally).
 */
import { createHash } from "node:crypto";
import { blankUnsafe } from "@farm/terminal-text";

/** Longest quoted protocol error (characters, before escaping). */
export const PROTOCOL_ERROR_MAX_CHARS = 80;

/** A body kept out of job data, for the worker's own log and metrics. */
export interface ForeignBody {
  /** The policy URL without credentials or query values (redactUrl). */
  url: string;
  status: number;
  /** Which check met it: a non-2xx answer, a 2xx answer that is not JSON, or JSON that is not what was asked. */
  kind: "http_status" | "not_json" | "not_an_answer";
  bytes: number;
  /** sha256 of the body (first 16 hex digits): tells repeated bodies apart in the local log. */
  sha256: string;
  /** A printable excerpt of at most 80 characters; for the worker's local log only. */
  excerpt: string;
  /** For not_an_answer: what was wrong, with the offending values (local log only). */
  detail?: string;
}

export type ForeignBodyListener = (body: ForeignBody) => void;

/** A short, printable excerpt (control and bidi characters blanked, whitespace folded, ≤ 80 characters). */
export function snippet(text: string): string {
  const s = blankUnsafe(text.slice(0, 400))
    .replace(/\s+/g, " ")
    .trim();
  return s.length > PROTOCOL_ERROR_MAX_CHARS ? `${s.slice(0, PROTOCOL_ERROR_MAX_CHARS - 3)}...` : s;
}

/** The quoted text of a protocol error, safe for job data: a JSON string literal of a snippet. */
export function quotedProtocolError(text: string): string {
  return JSON.stringify(snippet(text));
}

/** The `error` text when the body is the policy protocol's JSON error: an object whose `error` is a string. */
export function protocolError(text: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (json === null || typeof json !== "object" || Array.isArray(json) || !Object.hasOwn(json, "error")) return undefined;
  const e = (json as { error: unknown }).error;
  return typeof e === "string" ? e : undefined;
}

export function foreignBody(url: string, status: number, kind: ForeignBody["kind"], text: string, bytes: number, detail?: string): ForeignBody {
  return {
    url,
    status,
    kind,
    bytes,
    sha256: createHash("sha256").update(text).digest("hex").slice(0, 16),
    excerpt: snippet(text),
    ...(detail !== undefined ? { detail: snippet(detail) } : {}),
  };
}

/** An error message about a value, without the value: action.ts says "<rule>, got <value>". */
export function withoutValues(message: string): string {
  const i = message.indexOf(", got ");
  return i < 0 ? message : message.slice(0, i);
}
