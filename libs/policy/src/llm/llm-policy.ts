/**
 * The `llm` policy: each step asks a model served behind an OpenAI-compatible chat-completions API (vLLM, SGLang,
 * llama.cpp's server, Ollama) for one AndroidWorld JSON action, given the goal, the history, the elements and the
 * screenshot. An answer without a usable action is asked again with a short correction (invalidRetries), then
 * recorded as an invalid step; HTTP trouble is retried in chat-client.ts, then thrown as a PolicyError.
 * Its pieces: options.ts (settings), step-message.ts (the prompt and screenshot of a step), chat-client.ts (the HTTP
 * exchange), answer-check.ts (is the answer usable), tally.ts (tries and tokens); this file puts them together.
 */
import { createHash } from "node:crypto";
import { coerceError } from "@farm/errors";
import { GIVEN_MAX_CHARS } from "../answer.ts";
import { snippet } from "../foreign-body.ts";
import type { EpisodeContext, Policy, PolicyDecision } from "../types.ts";
import { redactUrl } from "../url-guard.ts";
import { correction, usableAction } from "./answer-check.ts";
import { ChatClient, type ChatMessage, type ChatReply } from "./chat-client.ts";
import { resolveLlmOptions, type LlmPolicyOptions, type ResolvedLlmOptions } from "./options.ts";
import { checkTemplate, DEFAULT_PROMPT_TEMPLATE } from "./prompt.ts";
import { PromptHistory } from "./screen-text.ts";
import { stepMessage } from "./step-message.ts";
import { Tally } from "./tally.ts";
import { llmActDeadlineMs } from "./act-deadline.ts";

const clip = (s: string) => (s.length > GIVEN_MAX_CHARS ? s.slice(0, GIVEN_MAX_CHARS) : s);

export function llmPolicy(options: LlmPolicyOptions): Policy<PolicyDecision> {
  const template = checkTemplate(options.promptTemplate ?? DEFAULT_PROMPT_TEMPLATE, "llm policy prompt");
  const o: ResolvedLlmOptions = resolveLlmOptions(options, template);
  const client = new ChatClient(o);
  const shownEndpoint = redactUrl(o.endpoint);
  const history = new PromptHistory(o.historySteps);
  let ctx: EpisodeContext | undefined;
  // What the prompt is made of decides what the model does: the template and sampling settings name the version.
  const version = createHash("sha256").update(`${template}\u0000${o.maxTokens}\u0000${o.temperature}\u0000${o.screenshot}`).digest("hex").slice(0, 12);

  /** One line for a step that needed more than one try or gave no action (not one per try). */
  function logStreak(t: Tally, outcome: "ok" | "invalid" | "error", reason?: string): void {
    if (!o.logger || (outcome === "ok" && t.tried.exchanges <= 1)) return;
    o.logger.warn(
      { event: "policy:llm-retries", endpoint: shownEndpoint, model: o.model, outcome, exchanges: t.tried.exchanges, httpRetries: t.tried.httpRetries, invalidAnswers: t.invalidAnswers, ...(reason ? { reason: snippet(reason) } : {}) },
      outcome === "ok" ? "the model's answer needed more than one try" : outcome === "invalid" ? "the model gave no usable action; the step is recorded as invalid" : "the model server failed the step",
    );
  }

  return {
    name: `llm:${o.model}@${client.endpoint.url.host}${client.endpoint.url.pathname.replace(/\/chat\/completions$/, "")}`,
    version,
    needsPixels: o.screenshot,
    needsElements: true,
    actDeadlineMs: llmActDeadlineMs(o),
    async reset(c) {
      ctx = { ...c, screen: { ...c.screen } };
      history.clear();
    },
    async act(obs, signal) {
      if (obs.previous) history.add(obs.previous);
      const messages: ChatMessage[] = [await stepMessage({ template, screenshot: o.screenshot, screenshotMaxSide: o.screenshotMaxSide }, obs, ctx, history)];
      const t = new Tally();
      let reply: ChatReply;
      for (let n = 0; ; n++) {
        try {
          reply = await client.complete(messages, signal, t.tried);
        } catch (e) {
          logStreak(t, "error", coerceError(e).message);
          throw e;
        }
        t.add(reply);
        const r = usableAction(reply.content, obs.elements?.length);
        if ("ui" in r) {
          logStreak(t, "ok");
          return { action: r.ui, given: clip(reply.content), usage: t.usage(), ...(reply.version !== undefined ? { version: reply.version } : {}) };
        }
        t.invalidAnswers++;
        if (n >= o.invalidRetries) {
          logStreak(t, "invalid", r.invalid);
          return { invalid: r.invalid, given: clip(reply.content), usage: t.usage(), ...(reply.version !== undefined ? { version: reply.version } : {}) };
        }
        messages.push({ role: "assistant", content: clip(reply.content) }, { role: "user", content: correction(r.invalid) });
      }
    },
    async close() {
      client.close();
    },
  };
}
