/**
 * The `llm` policy's options: where the model is served, how it is asked, how long and how often it is tried.
 * Checked once, with errors naming the option (a bad value is the operator's to fix, not the model's).
 */
import type { Logger } from "@farm/log";
import { PolicyError } from "../errors.ts";
import type { ForeignBodyListener } from "../foreign-body.ts";
import { LLM_MODEL_PATTERN, LLM_SETTING_BOUNDS } from "./bounds.ts";
import { keyHostProblem } from "./key-hosts.ts";

/**
 * The environment variable the API key comes from (never a flag, a job or a spec: those are readable by others).
 * The services' and the CLI's config read it (SettingsReader) and pass it as `apiKey`.
 */
export const LLM_API_KEY_ENV = "FARM_LLM_API_KEY";

/** What is wrong with an API key, without quoting it; undefined when it is fine. */
export function llmApiKeyProblem(key: string): string | undefined {
  return /^[\x21-\x7e]{1,4096}$/.test(key) ? undefined : "must be 1-4096 printable characters without spaces";
}

export interface LlmPolicyOptions {
  /** Base URL of the OpenAI-compatible API, ending in /v1 (the policy POSTs `{endpoint}/chat/completions`). */
  endpoint: string;
  /** The model name the server knows (vLLM: the served model; llama-server: any). */
  model: string;
  /** @default 256 */
  maxTokens?: number;
  /** @default 0 */
  temperature?: number;
  /** One HTTP exchange's deadline. @default 60 000 */
  timeoutMs?: number;
  /** Requests in flight at once to this endpoint, for every llm policy of the process. @default 8 */
  concurrency?: number;
  /** Send the screenshot as an image part (off for text-only models). @default true */
  screenshot?: boolean;
  /** The screenshot's longer side after downscaling, in pixels. @default 768 */
  screenshotMaxSide?: number;
  /** The prompt template's text (prompt.ts: placeholders); default DEFAULT_PROMPT_TEMPLATE. */
  promptTemplate?: string;
  /** Answers without a usable JSON action asked again (with a corrective message) before the step is invalid. @default 2 */
  invalidRetries?: number;
  /** HTTP 429 / 500 / 503 and timeouts tried again, with backoff. @default 3 */
  httpRetries?: number;
  /** Longest wait between two tries (also caps a server's Retry-After). @default 10 000 */
  maxBackoffMs?: number;
  /** Previous steps shown in the prompt. @default 20 */
  historySteps?: number;
  /** Sent as `Authorization: Bearer`, never logged (config: FARM_LLM_API_KEY). None: no header (a local server). */
  apiKey?: string;
  /** Hosts besides loopback (url-guard.ts). */
  allowedHosts?: readonly string[];
  /** Hosts the API key may be sent to (key-hosts.ts; default loopback). With a key, another endpoint is refused. */
  keyHosts?: readonly string[];
  onExchange?: (ok: boolean) => void;
  onForeignBody?: ForeignBodyListener;
  /** One line per act() that needed more than one try or ended without a valid action. */
  logger?: Logger;
}

export type ResolvedLlmOptions = Required<Omit<LlmPolicyOptions, "apiKey" | "allowedHosts" | "keyHosts" | "onExchange" | "onForeignBody" | "logger">> &
  Pick<LlmPolicyOptions, "apiKey" | "allowedHosts" | "onExchange" | "onForeignBody" | "logger">;

export const LLM_DEFAULTS = {
  maxTokens: 256,
  temperature: 0,
  timeoutMs: 60_000,
  concurrency: 8,
  screenshot: true,
  screenshotMaxSide: 768,
  invalidRetries: 2,
  httpRetries: 3,
  maxBackoffMs: 10_000,
  historySteps: 20,
} as const;

export { LLM_MODEL_PATTERN };

function intIn(name: string, v: number | undefined, def: number, min: number, max: number): number {
  if (v === undefined) return def;
  if (!Number.isInteger(v) || v < min || v > max) throw new PolicyError("bad_spec", `llm policy: ${name} must be a whole number from ${min} to ${max}, got ${String(v).slice(0, 40)}`);
  return v;
}

export function resolveLlmOptions(o: LlmPolicyOptions, template: string): ResolvedLlmOptions {
  if (!LLM_MODEL_PATTERN.test(o.model ?? "")) throw new PolicyError("bad_spec", `llm policy: model ${JSON.stringify(String(o.model).slice(0, 60))} must be 1-128 letters, digits and . _ : / + -`);
  const temperature = o.temperature ?? LLM_DEFAULTS.temperature;
  if (!(Number.isFinite(temperature) && temperature >= LLM_SETTING_BOUNDS.temperature.min && temperature <= LLM_SETTING_BOUNDS.temperature.max)) throw new PolicyError("bad_spec", `llm policy: temperature must be from 0 to 2, got ${temperature}`);
  const apiKey = o.apiKey;
  if (apiKey !== undefined && llmApiKeyProblem(apiKey)) throw new PolicyError("bad_spec", `llm policy: the API key (${LLM_API_KEY_ENV}) ${llmApiKeyProblem(apiKey)}`);
  const keyRefused = apiKey ? keyHostProblem(o.endpoint, o.keyHosts) : undefined;
  if (keyRefused) throw new PolicyError("url_not_allowed", `llm policy: ${keyRefused}`);
  return {
    endpoint: o.endpoint,
    model: o.model,
    maxTokens: intIn("maxTokens", o.maxTokens, LLM_DEFAULTS.maxTokens, LLM_SETTING_BOUNDS.maxTokens.min, LLM_SETTING_BOUNDS.maxTokens.max),
    temperature,
    timeoutMs: intIn("timeoutMs", o.timeoutMs, LLM_DEFAULTS.timeoutMs, LLM_SETTING_BOUNDS.timeoutMs.min, LLM_SETTING_BOUNDS.timeoutMs.max),
    concurrency: intIn("concurrency", o.concurrency, LLM_DEFAULTS.concurrency, LLM_SETTING_BOUNDS.concurrency.min, LLM_SETTING_BOUNDS.concurrency.max),
    screenshot: o.screenshot ?? LLM_DEFAULTS.screenshot,
    screenshotMaxSide: intIn("screenshotMaxSide", o.screenshotMaxSide, LLM_DEFAULTS.screenshotMaxSide, LLM_SETTING_BOUNDS.screenshotMaxSide.min, LLM_SETTING_BOUNDS.screenshotMaxSide.max),
    promptTemplate: template,
    invalidRetries: intIn("invalidRetries", o.invalidRetries, LLM_DEFAULTS.invalidRetries, 0, 10),
    httpRetries: intIn("httpRetries", o.httpRetries, LLM_DEFAULTS.httpRetries, 0, 10),
    maxBackoffMs: intIn("maxBackoffMs", o.maxBackoffMs, LLM_DEFAULTS.maxBackoffMs, 0, 300_000),
    historySteps: intIn("historySteps", o.historySteps, LLM_DEFAULTS.historySteps, 0, 200),
    ...(apiKey ? { apiKey } : {}),
    ...(o.allowedHosts ? { allowedHosts: o.allowedHosts } : {}),
    ...(o.onExchange ? { onExchange: o.onExchange } : {}),
    ...(o.onForeignBody ? { onForeignBody: o.onForeignBody } : {}),
    ...(o.logger ? { logger: o.logger } : {}),
  };
}
