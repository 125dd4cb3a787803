/**
 * One chat-completions call with its retries: `POST {endpoint}/chat/completions` through the policy lib's HTTP
 * endpoint (allow-list, deadline, bounded body, foreign-body rule), each exchange inside the endpoint's
 * concurrency gate. HTTP 429 / 500 / 503 and timeouts are tried again after a backoff (the server's Retry-After
 * when it sent one), both bounded; anything else is thrown as the endpoint classified it.
 */
import { sleep } from "@farm/time";
import { PolicyError } from "../errors.ts";
import { httpEndpoint, type HttpEndpoint } from "../http-endpoint.ts";
import type { AnswerMeta } from "../http-answer.ts";
import { POLICY_VERSION_MAX_CHARS } from "../answer.ts";
import { joinGate, type GateTicket } from "./endpoint-gate.ts";
import type { ResolvedLlmOptions } from "./options.ts";

export type ContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string | ContentPart[];
}

export interface ChatReply {
  content: string;
  promptTokens?: number;
  completionTokens?: number;
  /** The policy version that answered: the response's `X-Policy-Version` header, else its `model` field (the header wins). */
  version?: string;
}

/** A chat completion's answer is larger than a policy action; still bounded. */
const MAX_RESPONSE_BYTES = 512 * 1024;
export const BACKOFF_BASE_MS = 500;
const RETRIED_STATUSES = new Set([429, 500, 503]);

function count(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined;
}

/** The model name a chat completion says answered (its `model` field), as a version: printable, at most 128 characters. */
function modelVersion(json: unknown): string | undefined {
  const m = (json as { model?: unknown } | null)?.model;
  if (typeof m !== "string") return undefined;
  const v = m.trim().slice(0, POLICY_VERSION_MAX_CHARS);
  return v && !/[\u0000-\u001f\u007f-\u009f]/.test(v) ? v : undefined;
}

/**
 * The answer's text, usage and version (`meta.version`: the response's X-Policy-Version, which wins over the body's
 * `model`); throws a plain Error naming the rule a body breaks (never its values).
 */
export function parseCompletion(json: unknown, meta: AnswerMeta = {}): ChatReply {
  const choices = (json as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices) || choices.length === 0) throw new Error("a chat completion needs a non-empty choices array");
  const message = (choices[0] as { message?: unknown } | null)?.message as { content?: unknown } | undefined;
  if (typeof message !== "object" || message === null) throw new Error("choices[0].message must be an object");
  const c = message.content;
  let content: string;
  if (typeof c === "string") content = c;
  else if (c === null || c === undefined) content = "";
  else if (Array.isArray(c)) content = c.map((p) => (typeof (p as { text?: unknown })?.text === "string" ? (p as { text: string }).text : "")).join("");
  else throw new Error("choices[0].message.content must be text");
  const usage = (json as { usage?: Record<string, unknown> }).usage;
  const promptTokens = count(usage?.prompt_tokens);
  const completionTokens = count(usage?.completion_tokens);
  const version = meta.version ?? modelVersion(json);
  return { content, ...(promptTokens !== undefined ? { promptTokens } : {}), ...(completionTokens !== undefined ? { completionTokens } : {}), ...(version !== undefined ? { version } : {}) };
}

function retriable(e: unknown): e is PolicyError {
  if (!(e instanceof PolicyError)) return false;
  return e.code === "timeout" || (e.code === "http_status" && RETRIED_STATUSES.has(e.httpStatus ?? 0));
}

export class ChatClient {
  readonly endpoint: HttpEndpoint;
  private readonly gate: GateTicket;

  constructor(private readonly o: ResolvedLlmOptions) {
    const base = o.endpoint.replace(/\/+$/, "");
    this.endpoint = httpEndpoint(`${base}/chat/completions`, {
      timeoutMs: o.timeoutMs,
      maxResponseBytes: MAX_RESPONSE_BYTES,
      ...(o.apiKey ? { headers: { authorization: `Bearer ${o.apiKey}` } } : {}),
      ...(o.allowedHosts ? { allowedHosts: o.allowedHosts } : {}),
      ...(o.onExchange ? { onExchange: o.onExchange } : {}),
      ...(o.onForeignBody ? { onForeignBody: o.onForeignBody } : {}),
    });
    this.gate = joinGate(this.endpoint.url.toString(), o.concurrency, this.endpoint.where);
  }

  /** `exchanges` counts every exchange made, also when it throws (then on `tried`). */
  async complete(messages: ChatMessage[], signal: AbortSignal | undefined, tried: { exchanges: number; httpRetries: number }): Promise<ChatReply> {
    const body = JSON.stringify({ model: this.o.model, messages, max_tokens: this.o.maxTokens, temperature: this.o.temperature });
    for (let attempt = 0; ; attempt++) {
      const release = await this.gate.acquire(signal);
      tried.exchanges++;
      try {
        return await this.endpoint.request(body, parseCompletion, "answer is not a chat completion", signal);
      } catch (e) {
        if (!retriable(e) || attempt >= this.o.httpRetries || signal?.aborted) throw e;
        tried.httpRetries++;
        release();
        await sleep(this.backoffMs(attempt, e.retryAfterMs), signal);
        if (signal?.aborted) throw new PolicyError("aborted", `${this.endpoint.where}: aborted by the caller while waiting to try again`, { cause: e });
        continue;
      } finally {
        release(); // a second call is a no-op
      }
    }
  }

  private backoffMs(attempt: number, retryAfter: number | undefined): number {
    // The server's word when it gave one; else doubling with jitter, so many devices do not retry in step.
    const wanted = retryAfter ?? BACKOFF_BASE_MS * 2 ** attempt * (0.8 + 0.4 * Math.random());
    return Math.min(wanted, this.o.maxBackoffMs);
  }

  close(): void {
    this.endpoint.close();
    this.gate.leave();
  }
}
