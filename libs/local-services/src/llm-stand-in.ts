/**
 * An OpenAI-compatible chat-completions server of our own, for tests and benchmarks of the `llm` policy (no model
 * runs on our machines): `POST /v1/chat/completions` answers from a script (llm-stand-in-script.ts) with `usage`,
 * `GET /v1/models` lists the one model, `GET /stats` says how many requests it served and how long it took (`served`, `busyMs`, `maxInFlight`). It records what it was sent (the tests check the prompt) and the most
 * requests it had in flight at once. Loopback only.
 *
 *   const llm = await startLlmStandIn({ script: [{ fenced: { action_type: "wait" } }], solver: [{ click_text: "NEW NOTE" }] });
 *   // endpoint: llm.endpoint ("http://127.0.0.1:<port>/v1"); llm.requests; await llm.close();
 */
import http from "node:http";
import { sleep } from "@farm/time";
import { listenOnFreePort } from "@farm/net-ports";
import { promptElements, replyText, solverAction, type StandInEntry, type StandInReply } from "./llm-stand-in-script.ts";

export type { StandInEntry, StandInReply, StandInAction, PromptElement } from "./llm-stand-in-script.ts";

export interface LlmStandInOptions {
  /** Answered one per request, in order. */
  script?: StandInEntry[];
  /** After the script: rules answered by the prompt's elements (the first that applies); else a wait action. */
  solver?: StandInReply[];
  /** Delay before every answer (the benchmark's fixed model time). */
  delayMs?: number;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (else 401). */
  apiKey?: string;
  /** The model `/v1/models` lists and answers name. @default "stand-in" */
  model?: string;
  /** The `model` each answer names, asked per answer (a learner's server that names its checkpoint). @default `model` */
  answerModel?: () => string;
  /** An `X-Policy-Version` header on each answer, asked per answer (undefined: none). */
  policyVersionHeader?: () => string | undefined;
  /** Requests kept in `requests` (oldest dropped; each holds its images: a benchmark keeps few or 0). @default 256 */
  keepRequests?: number;
}

export interface RecordedRequest {
  authorization: string | undefined;
  body: { model?: unknown; messages?: unknown; max_tokens?: unknown; temperature?: unknown } & Record<string, unknown>;
  /** The user and system messages' text parts, joined. */
  promptText: string;
  /** Image parts' URLs (data URLs). */
  images: string[];
}

export interface LlmStandIn {
  readonly endpoint: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  /** The most requests in flight at once so far. */
  readonly maxInFlight: number;
  /** Chat-completion requests received so far (all of them, unlike `requests`, which keeps the latest). */
  readonly served: number;
  /** Requests whose client went away before the answer was sent (a caller that aborted at its deadline). */
  readonly abandoned: number;
  /** Replaces the script (tests change it between cases). */
  setScript(script: StandInEntry[]): void;
  close(): Promise<void>;
}

const MAX_BODY = 16 * 1024 * 1024;

function textOf(messages: unknown): { text: string; images: string[] } {
  const texts: string[] = [];
  const images: string[] = [];
  if (!Array.isArray(messages)) return { text: "", images };
  for (const m of messages as { role?: unknown; content?: unknown }[]) {
    if (m?.role === "assistant") continue;
    if (typeof m?.content === "string") texts.push(m.content);
    else if (Array.isArray(m?.content)) {
      for (const p of m.content as { type?: unknown; text?: unknown; image_url?: { url?: unknown } }[]) {
        if (p?.type === "text" && typeof p.text === "string") texts.push(p.text);
        if (p?.type === "image_url" && typeof p.image_url?.url === "string") images.push(p.image_url.url);
      }
    }
  }
  return { text: texts.join("\n"), images };
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": typeof body === "string" ? "text/plain" : "application/json", "content-length": String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

export async function startLlmStandIn(opts: LlmStandInOptions = {}): Promise<LlmStandIn> {
  let script = [...(opts.script ?? [])];
  const model = opts.model ?? "stand-in";
  const requests: RecordedRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let served = 0;
  let abandoned = 0;
  /** Time spent on requests, from the request's arrival to the answer written (the model's own time, as a client would see it on a free network). */
  let busyMs = 0;
  let seq = 0;
  const ac = new AbortController();

  async function answer(entry: StandInEntry | undefined, prompt: string, res: http.ServerResponse): Promise<void> {
    if (entry && "slowMs" in entry) {
      await sleep(entry.slowMs, ac.signal);
      return answer({ ...(entry.then ?? { json: { action_type: "wait" } }), ...(entry.usage ? { usage: entry.usage } : {}) } as StandInEntry, prompt, res);
    }
    if (entry && "status" in entry) {
      const headers: Record<string, string> = entry.retryAfterS !== undefined ? { "retry-after": String(entry.retryAfterS) } : {};
      return send(res, entry.status, entry.body ?? { error: { message: `scripted HTTP ${entry.status}`, type: "stand_in" } }, headers);
    }
    const elements = promptElements(prompt);
    const content = entry ? replyText(entry, elements) : JSON.stringify(solverAction(opts.solver ?? [], elements));
    const usage = entry?.usage ?? { prompt_tokens: Math.ceil(prompt.length / 4), completion_tokens: Math.ceil(content.length / 4) };
    const version = opts.policyVersionHeader?.();
    send(
      res,
      200,
      {
        id: `chatcmpl-standin-${++seq}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: opts.answerModel?.() ?? model,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      },
      version !== undefined ? { "x-policy-version": version } : {},
    );
  }

  const server = http.createServer((req, res) => {
    const url = req.url ?? "/";
    if (req.method === "GET" && url === "/stats") return send(res, 200, { served, maxInFlight, busyMs });
    if (req.method === "GET" && url === "/v1/models") return send(res, 200, { object: "list", data: [{ id: model, object: "model", owned_by: "farm" }] });
    if (req.method !== "POST" || url !== "/v1/chat/completions") return send(res, 404, { error: { message: "not found", type: "invalid_request_error" } });
    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) return send(res, 401, { error: { message: "invalid API key", type: "authentication_error" } });
    const t0 = performance.now();
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(c);
    });
    req.on("end", () => {
      let body: RecordedRequest["body"];
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as RecordedRequest["body"];
      } catch {
        return send(res, 400, { error: { message: "body is not JSON", type: "invalid_request_error" } });
      }
      const { text, images } = textOf(body.messages);
      served++;
      requests.push({ authorization: req.headers.authorization, body, promptText: text, images });
      if (requests.length > (opts.keepRequests ?? 256)) requests.shift();
      const entry = script.shift();
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      res.on("close", () => {
        if (!res.writableFinished) abandoned++;
      });
      void (async () => {
        try {
          await sleep(opts.delayMs ?? 0, ac.signal);
          await answer(entry, text, res);
        } catch {
          if (!res.headersSent) send(res, 500, { error: { message: "stand-in failed", type: "stand_in" } });
        } finally {
          inFlight--;
          busyMs += performance.now() - t0;
        }
      })();
    });
  });
  const port = await listenOnFreePort(server);
  return {
    endpoint: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    get served() {
      return served;
    },
    get abandoned() {
      return abandoned;
    },
    setScript(s) {
      script = [...s];
    },
    async close() {
      ac.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
